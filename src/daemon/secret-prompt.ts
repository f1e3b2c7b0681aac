/**
 * What a permission request opens of the credential locations every sandbox hides (src/sandbox/secrets.ts),
 * for its prompt: a `--with-permissions` read or write of `~/.ssh` (or a path inside it) is shown to the
 * person as "reads the hidden secret location ...". Reads the filesystem (which locations exist, real
 * paths) and the password database; the locations are the daemon's: its HOME, the user's home, its
 * environment and the [secrets] setting. Trust boundary: the requested paths are the caller's (untrusted);
 * they only pick which of the daemon's own locations are named.
 */
import type { SecretAccess } from '../protocol/index.js';
import { existingSecrets, nodeFs, type PermissionProfile, secretAccess, secretLocations, type SecretsSetting, userHomes } from '../sandbox/index.js';

export function secretAccessFor(
  profile: PermissionProfile | undefined,
  o: { env: Record<string, string | undefined>; setting?: SecretsSetting },
): SecretAccess[] | undefined {
  const fsp = profile?.file_system;
  if (!fsp?.read?.length && !fsp?.write?.length) return undefined;
  const real = (paths: readonly string[] = []) => paths.filter((p) => typeof p === 'string' && p.startsWith('/')).map((p) => nodeFs.realpath(p) ?? p);
  const found = existingSecrets(secretLocations({ homes: userHomes(o.env), env: o.env, setting: o.setting, fs: nodeFs }), nodeFs);
  const opened = secretAccess(found, { read: real(fsp.read), write: real(fsp.write) });
  return opened.length ? opened : undefined;
}
