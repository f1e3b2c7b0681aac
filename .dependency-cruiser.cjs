// The import-direction check (issue 15), run by `npm test` through `npm run lint`: a folder under src/ may
// import only its own files and the folders below it. The order is the one the README's "## Architecture"
// section lists (one folder a line, top to bottom), read from README.md so the two cannot differ; a folder
// under src/ that the README does not list is an error too. Type-only imports count (a type is a
// dependency on the layer that owns it). Pure configuration: reads README.md, nothing else.
// A folder's public surface is its index.ts: an import from another folder names `../<folder>/index.js`,
// never a file inside it (imports inside a folder stay direct, and never through the folder's own index,
// so no import cycle runs through an index). A dynamic import() is the one exception: it is a lazy load
// of one module (gate-sh's start-up cost), and naming the index would load the whole folder.
const { readFileSync } = require('node:fs');
const { join } = require('node:path');

/** The layer folders of README.md's Architecture section, top to bottom. */
function layerOrder(readme) {
  const section = readme.split(/^## Architecture\s*$/m)[1]?.split(/^## /m)[0] ?? '';
  const block = section.split('```')[1] ?? '';
  const order = [...block.matchAll(/^([a-z][a-z0-9-]*)\/\s/gm)].map((m) => m[1]);
  if (order.length < 2) throw new Error("gate-sh: README.md's Architecture section lists no layer folders");
  return order;
}

const order = layerOrder(readFileSync(join(__dirname, 'README.md'), 'utf8'));

module.exports = {
  forbidden: [
    ...order.slice(1).map((layer, i) => ({
      name: `${layer}-imports-upward`,
      comment: `src/${layer}/ may import only ${order.slice(i + 2).join(', ') || 'nothing else'} (README.md, Architecture)`,
      severity: 'error',
      from: { path: `^src/${layer}/` },
      to: { path: `^src/(${order.slice(0, i + 1).join('|')})/` },
    })),
    {
      name: 'not-through-index',
      comment: "an import from another folder goes through that folder's index.ts (a dynamic import() may name the module)",
      severity: 'error',
      from: { path: '^src/([^/]+)/' },
      to: { path: '^src/[^/]+/', pathNot: ['^src/$1/', '^src/[^/]+/index\\.ts$'], dependencyTypesNot: ['dynamic-import'] },
    },
    {
      name: 'own-index-inside',
      comment: "files inside a folder import each other directly, never through the folder's own index.ts (an import cycle)",
      severity: 'error',
      from: { path: '^src/([^/]+)/' },
      to: { path: '^src/$1/index\\.ts$' },
    },
    {
      name: 'folder-not-in-architecture',
      comment: 'every folder under src/ is a layer listed in README.md, Architecture',
      severity: 'error',
      from: {},
      to: { path: '^src/', pathNot: `^src/(${order.join('|')})/` },
    },
    {
      name: 'folder-not-in-architecture',
      comment: 'every folder under src/ is a layer listed in README.md, Architecture',
      severity: 'error',
      from: { path: '^src/', pathNot: `^src/(${order.join('|')})/` },
      to: {},
    },
  ],
  options: {
    includeOnly: '^src/',
    tsPreCompilationDeps: true,
    enhancedResolveOptions: { extensions: ['.ts', '.js'] },
    tsConfig: { fileName: 'tsconfig.json' },
  },
};
