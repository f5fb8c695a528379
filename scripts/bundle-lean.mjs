// Part of `npm run build`: the CLI's lean path (src/cli/lean-entry.ts, what `engine status` and
// `engine tag find` load when a daemon answers) as one module, written over tsc's
// dist/cli/lean-entry.js, so main.js loads one file instead of about 40. The modules only the
// files' path needs stay outside (loaded from dist/ as they are: the scan pool's workers are
// found beside their module), and so does errors.js, so an EngineError thrown in either is one
// class. Every module of src/ lies one folder deep, so `../x.js` names the same file from the
// bundle in dist/cli/ as from its own folder.
//
// The prefilter worker of `find` over the files (src/tags/prefilter-worker.ts, a thread each
// `engine tag find` without a daemon starts) is bundled the same way, over tsc's
// dist/tags/prefilter-worker.js, where prefilter-tree.ts starts it: the worker loads one module
// instead of about 12 before its first read. Nothing it holds is shared with the main thread.
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';

/** One ESM module for Node 20 from `entry` (under src/) at `out` (under dist/). */
const bundle = (entry, out, external = []) =>
  build({
    entryPoints: [fileURLToPath(new URL(`../src/${entry}`, import.meta.url))],
    outfile: fileURLToPath(new URL(`../dist/${out}`, import.meta.url)),
    bundle: true,
    platform: 'node',
    format: 'esm',
    target: 'node20',
    sourcemap: true,
    allowOverwrite: true,
    external,
    logLevel: 'warning',
  });

await bundle('cli/lean-entry.ts', 'cli/lean-entry.js', [
  '../tags/find-tagged-files.js',
  '../status/collect-status.js',
  '../errors.js',
]);
await bundle('tags/prefilter-worker.ts', 'tags/prefilter-worker.js');
