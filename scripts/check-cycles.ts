// `npm run check:cycles` (part of `npm test`): the import graph of src/ is a DAG. dpdm reads the
// graph; type-only imports and re-exports count, since a cycle of any kind leaves the modules no
// order to be read or reshaped in. This script then checks two things:
// - no cycle between files, except those on ALLOWED;
// - each folder imports only from folders on lower rows of LAYERS (docs/ARCHITECTURE.md).
import { readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseDependencyTree } from 'dpdm';

/** Rows of folders (and src/errors.ts), lowest first: each imports only from rows below its own. */
export const LAYERS: string[][] = [
  ['errors.ts'],
  ['tags', 'process', 'runners'],
  ['files', 'dispatch'],
  ['sessions', 'watch', 'order'],
  ['agents', 'notify', 'transcript'],
  // index: the daemon's live tag index of the watched files, fed by the daemon.
  ['resume', 'worktrees', 'settings', 'index', 'claims'],
  ['approve', 'daemon'],
  // `engine status` reports what the daemon and the approvals know: it reads both.
  ['status'],
  // control: the daemon's socket (its server serves the item table and status; its client is
  // what the CLI and the board ask).
  ['init', 'actions', 'control'],
  // service: `engine stop` and the service units (systemd, launchd) that run a root's daemon.
  ['service'],
  // doctor: checks of the set-up; reads settings, agents, the daemon lock, the control socket,
  // and whether a service unit is installed.
  ['doctor'],
  ['board'],
  ['cli'],
];

/**
 * Cycles tolerated for a while, each as its files (relative to src/): none now. An entry is a
 * debt with a plan to pay it; the check says when one is gone, so the list stays exact.
 */
export const ALLOWED: string[][] = [];

/** file -> the files it imports, as paths relative to the root, `/`-separated. */
export type ImportGraph = Map<string, string[]>;

/**
 * The import graph of the .ts files under `root`, and what would make it incomplete: a relative
 * import that resolves to nothing, or dpdm's `@dpdm-ignore` comment, each hiding an import.
 */
export async function importGraph(
  root: string,
): Promise<{ graph: ImportGraph; problems: string[] }> {
  const tree = await parseDependencyTree([`${root}/**/*.ts`], {
    context: root,
    // Resolves `./x.js` to `./x.ts` with tsc's own NodeNext resolution.
    tsconfig: fileURLToPath(new URL('../tsconfig.json', import.meta.url)),
    transform: false,
    skipDynamicImports: false,
  });
  const graph: ImportGraph = new Map();
  const problems: string[] = [];
  for (const [file, deps] of Object.entries(tree)) {
    // null: a file outside the scan (a package), listed only because something imports it.
    if (deps === null || file.startsWith('..')) continue;
    const targets = new Set<string>();
    for (const dep of deps) {
      if (!dep.request.startsWith('.')) continue;
      if (dep.id === null) problems.push(`${file} imports ${dep.request}, which is not found`);
      else targets.add(dep.id);
    }
    graph.set(file, [...targets].sort());
    if (readFileSync(join(root, file), 'utf8').includes('@dpdm-ignore')) {
      problems.push(`${file} holds @dpdm-ignore, which hides an import from this check`);
    }
  }
  return { graph, problems };
}

/** The strongly connected components that are cycles: two files or more, or a self-import. */
export function cyclesOf(graph: ImportGraph): string[][] {
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const cycles: string[][] = [];
  let next = 0;
  const lowOf = (node: string): number => low.get(node) as number;
  const visit = (node: string): void => {
    index.set(node, next);
    low.set(node, next++);
    stack.push(node);
    onStack.add(node);
  };
  // Tarjan's algorithm with an explicit stack of (file, next import to follow).
  for (const start of graph.keys()) {
    if (index.has(start)) continue;
    visit(start);
    const work: Array<{ node: string; at: number }> = [{ node: start, at: 0 }];
    while (work.length > 0) {
      const frame = work[work.length - 1] as { node: string; at: number };
      const targets = graph.get(frame.node) ?? [];
      const target = targets[frame.at++];
      if (target !== undefined) {
        if (!index.has(target)) {
          visit(target);
          work.push({ node: target, at: 0 });
        } else if (onStack.has(target)) {
          low.set(frame.node, Math.min(lowOf(frame.node), index.get(target) as number));
        }
        continue;
      }
      work.pop();
      const parent = work[work.length - 1];
      if (parent) low.set(parent.node, Math.min(lowOf(parent.node), lowOf(frame.node)));
      if (low.get(frame.node) !== index.get(frame.node)) continue;
      const component: string[] = [];
      let member: string;
      do {
        member = stack.pop() as string;
        onStack.delete(member);
        component.push(member);
      } while (member !== frame.node);
      if (component.length > 1 || targets.includes(frame.node)) cycles.push(component.sort());
    }
  }
  return cycles;
}

const folderOf = (file: string): string => file.split('/')[0] as string;
const keyOf = (files: string[]): string => [...files].sort().join(' ');

/** What fails the check (errors) and what to tidy in ALLOWED (notes). */
export function judgeGraph(
  graph: ImportGraph,
  allowed: string[][] = ALLOWED,
  layers: string[][] = LAYERS,
): { errors: string[]; notes: string[] } {
  const errors: string[] = [];
  const notes: string[] = [];
  const allowedKeys = new Set(allowed.map(keyOf));
  const found = new Set<string>();
  for (const cycle of cyclesOf(graph)) {
    found.add(keyOf(cycle));
    if (allowedKeys.has(keyOf(cycle))) continue;
    const members = new Set(cycle);
    const edges = cycle.flatMap((file) =>
      (graph.get(file) ?? []).filter((t) => members.has(t)).map((t) => `\n    ${file} -> ${t}`),
    );
    errors.push(`import cycle among ${cycle.join(', ')}:${edges.join('')}`);
  }
  for (const files of allowed) {
    if (!found.has(keyOf(files))) {
      notes.push(`the allowed cycle ${files.join(', ')} is gone: delete it from ALLOWED`);
    }
  }
  const row = new Map(layers.flatMap((folders, at) => folders.map((f) => [f, at] as const)));
  for (const [file, targets] of graph) {
    const from = folderOf(file);
    const fromRow = row.get(from);
    if (fromRow === undefined) {
      errors.push(`${from} (holding ${file}) is on no row of LAYERS: add it where it belongs`);
      continue;
    }
    for (const target of targets) {
      const toRow = row.get(folderOf(target));
      if (folderOf(target) !== from && toRow !== undefined && toRow >= fromRow) {
        errors.push(`${file} imports ${target}: ${from} imports only from rows below its own`);
      }
    }
  }
  return { errors, notes };
}

async function main(): Promise<void> {
  const root = fileURLToPath(new URL('../src', import.meta.url));
  const { graph, problems } = await importGraph(root);
  const { errors, notes } = judgeGraph(graph);
  for (const note of notes) process.stdout.write(`check:cycles: ${note}\n`);
  const failures = [...problems, ...errors];
  for (const failure of failures) process.stderr.write(`check:cycles: ${failure}\n`);
  if (failures.length > 0) {
    process.stderr.write('check:cycles: failed (rules and allow-list: scripts/check-cycles.ts)\n');
    process.exitCode = 1;
    return;
  }
  process.stdout.write(
    `check:cycles: ${graph.size} files in src/, no cycle off ALLOWED, layers kept\n`,
  );
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) await main();
