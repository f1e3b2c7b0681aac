/**
 * Whether an npm config file (`~/.npmrc`, `$NPM_CONFIG_USERCONFIG`) holds a credential. The file is in the
 * default secrets list because `npm login` writes tokens there; but most of them hold only settings
 * (`registry`, `prefix`, `cache`, `@scope:registry`), and hiding those changes what npm does inside the
 * sandbox without a word: another registry, another global prefix. So the file is hidden (whole: the bytes a
 * run reads are the file's or none, never a filtered copy) unless every line is a setting known to hold no
 * secret. Fail closed: a key not in the list, a line that is not `key = value`, a value with a URL's
 * `user:password@`, a client certificate or key, an unreadable or large file — all count as a credential.
 * A token line whose value only names a variable (`_authToken=${NPM_TOKEN}`, npm's advice for CI) holds
 * nothing: the token is in the environment, which the run has anyway (docs/secrets.md, "Limits").
 * Pure: the text comes from the caller (src/sandbox/secrets.ts reads it through its FsView).
 * Trust boundary: the file is the user's, read outside the sandbox when a sandbox is built.
 */

/** npm (and pnpm) settings that hold no secret. Anything else in the file hides it. */
const SETTINGS = new Set([
  'registry',
  'prefix',
  'cache',
  'tmp',
  'save',
  'save-exact',
  'save-prefix',
  'save-dev',
  'save-optional',
  'save-peer',
  'save-bundle',
  'fund',
  'audit',
  'audit-level',
  'progress',
  'loglevel',
  'logs-dir',
  'logs-max',
  'update-notifier',
  'color',
  'unicode',
  'init-author-name',
  'init-author-email',
  'init-author-url',
  'init-license',
  'init-version',
  'init-module',
  'init.author.name',
  'init.author.email',
  'init.author.url',
  'init.license',
  'init.version',
  'engine-strict',
  'legacy-peer-deps',
  'strict-peer-deps',
  'package-lock',
  'package-lock-only',
  'lockfile-version',
  'ignore-scripts',
  'script-shell',
  'strict-ssl',
  'cafile',
  'ca',
  'python',
  'omit',
  'include',
  'optional',
  'production',
  'install-strategy',
  'install-links',
  'bin-links',
  'prefer-offline',
  'prefer-online',
  'offline',
  'fetch-retries',
  'fetch-retry-factor',
  'fetch-retry-mintimeout',
  'fetch-retry-maxtimeout',
  'fetch-timeout',
  'maxsockets',
  'proxy',
  'https-proxy',
  'noproxy',
  'git',
  'git-tag-version',
  'sign-git-commit',
  'sign-git-tag',
  'tag-version-prefix',
  'message',
  'editor',
  'shell',
  'umask',
  'always-auth',
  'workspaces-update',
  'auto-install-peers',
  'node-linker',
  'shamefully-hoist',
  'store-dir',
  'access',
  'tag',
  'provenance',
]);

/** A value that only names a variable, `${NAME}`, quoted or not. */
const VARIABLE = /^(["']?)\$\{[A-Za-z_][A-Za-z0-9_]*\}\1$/;

/** Whether this npm config text may hold a credential (so the file is hidden). */
export function npmrcHoldsCredential(text: string): boolean {
  for (const raw of text.split(/\r?\n/)) {
    const line = raw.trim();
    if (line === '' || line.startsWith(';') || line.startsWith('#')) continue;
    const m = /^([^=]+?)\s*=\s*(.*)$/.exec(line);
    if (!m) return true; // a [section], a bare word: not a setting we know
    let key = m[1];
    const value = m[2];
    if (/:\/\/[^/\s]*@/.test(value)) return true; // https://user:password@host
    if (VARIABLE.test(value)) continue; // names a variable, holds nothing
    // `//registry.example/:_authToken`: keys scoped to a registry are its credentials
    if (key.startsWith('//')) return true;
    key = key.replace(/^@[\w.-]+:(?=registry$)/, ''); // @scope:registry
    if (!SETTINGS.has(key)) return true;
  }
  return false;
}
