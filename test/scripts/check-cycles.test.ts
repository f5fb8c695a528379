/** `npm run check:cycles`: the graph dpdm reads from real files, and the rules judged on it. */
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cyclesOf, importGraph, judgeGraph, type ImportGraph } from '../../scripts/check-cycles.js';

let root: string;

beforeAll(async () => {
  root = await mkdtemp(join(tmpdir(), 'engine-cycles-'));
});
afterAll(async () => {
  await rm(root, { recursive: true, force: true });
});

async function tree(name: string, files: Record<string, string>): Promise<string> {
  const dir = join(root, name);
  for (const [path, text] of Object.entries(files)) {
    await mkdir(dirname(join(dir, path)), { recursive: true });
    await writeFile(join(dir, path), text);
  }
  return dir;
}

const graphOf = (edges: Record<string, string[]>): ImportGraph => new Map(Object.entries(edges));

describe('importGraph', () => {
  it('follows `.js` specifiers to `.ts` files, through type-only imports, re-exports and import()', async () => {
    const dir = await tree('kinds', {
      'tags/scan.ts':
        "import type { Found } from './types.js';\nexport const scan = (): Found[] => [];\n",
      'tags/types.ts': "export { scan } from './scan.js';\nexport interface Found { at: number }\n",
      'tags/lazy.ts': "export const load = () => import('../files/read.js');\n",
      'files/read.ts':
        "import { scan } from '../tags/scan.js';\nimport { readFile } from 'node:fs/promises';\nexport { scan, readFile };\n",
    });
    const { graph, problems } = await importGraph(dir);
    expect(problems).toEqual([]);
    expect(Object.fromEntries(graph)).toEqual({
      'tags/scan.ts': ['tags/types.ts'],
      'tags/types.ts': ['tags/scan.ts'],
      'tags/lazy.ts': ['files/read.ts'],
      'files/read.ts': ['tags/scan.ts'],
    });
    expect(cyclesOf(graph)).toEqual([['tags/scan.ts', 'tags/types.ts']]);
  });

  it('reports a relative import that resolves to nothing, which would hide a cycle', async () => {
    const dir = await tree('missing', {
      'a.ts': "import { b } from './b.js';\nexport const a = b;\n",
    });
    const { problems } = await importGraph(dir);
    expect(problems).toEqual(['a.ts imports ./b.js, which is not found']);
  });

  it('reports an import hidden by dpdm-ignore', async () => {
    const dir = await tree('ignored', {
      'a.ts': "// @dpdm-ignore\nimport { b } from './b.js';\nexport const a = b;\n",
      'b.ts': "import { a } from './a.js';\nexport const b = 1;\nexport { a };\n",
    });
    const { graph, problems } = await importGraph(dir);
    expect(cyclesOf(graph)).toEqual([]);
    expect(problems).toEqual(['a.ts holds @dpdm-ignore, which hides an import from this check']);
  });
});

describe('judgeGraph', () => {
  const layers = [['low'], ['high']];

  it('fails on a cycle off the allow-list, naming its imports', () => {
    const graph = graphOf({
      'low/a.ts': ['low/b.ts'],
      'low/b.ts': ['low/c.ts'],
      'low/c.ts': ['low/a.ts'],
    });
    expect(judgeGraph(graph, [], layers)).toEqual({
      errors: [
        'import cycle among low/a.ts, low/b.ts, low/c.ts:' +
          '\n    low/a.ts -> low/b.ts\n    low/b.ts -> low/c.ts\n    low/c.ts -> low/a.ts',
      ],
      notes: [],
    });
  });

  it('finds every cycle, a self-import included, and passes a DAG', () => {
    const graph = graphOf({
      'low/a.ts': ['low/a.ts', 'low/b.ts'],
      'low/b.ts': ['low/c.ts'],
      'low/c.ts': ['low/d.ts'],
      'low/d.ts': ['low/c.ts'],
    });
    expect(cyclesOf(graph)).toEqual([['low/c.ts', 'low/d.ts'], ['low/a.ts']]);
    const dag = graphOf({
      'low/a.ts': ['low/b.ts', 'low/c.ts'],
      'low/b.ts': ['low/c.ts'],
      'low/c.ts': [],
    });
    expect(judgeGraph(dag, [], layers)).toEqual({ errors: [], notes: [] });
  });

  it('accepts a cycle on the allow-list only as listed, and says when an allowed one is gone', () => {
    const allowed = [
      ['low/b.ts', 'low/a.ts'],
      ['low/x.ts', 'low/y.ts'],
    ];
    const listed = graphOf({ 'low/a.ts': ['low/b.ts'], 'low/b.ts': ['low/a.ts'] });
    expect(judgeGraph(listed, allowed, layers)).toEqual({
      errors: [],
      notes: ['the allowed cycle low/x.ts, low/y.ts is gone: delete it from ALLOWED'],
    });
    const grown = graphOf({
      'low/a.ts': ['low/b.ts'],
      'low/b.ts': ['low/c.ts'],
      'low/c.ts': ['low/a.ts'],
    });
    expect(judgeGraph(grown, allowed, layers).errors).toHaveLength(1);
  });

  it('fails on an import from a row up or across, and on a folder on no row', () => {
    const graph = graphOf({
      'low/a.ts': ['high/b.ts'],
      'high/b.ts': ['low/c.ts'],
      'low/c.ts': [],
      'side/d.ts': [],
    });
    expect(judgeGraph(graph, [], [['low'], ['high']]).errors).toEqual([
      'low/a.ts imports high/b.ts: low imports only from rows below its own',
      'side (holding side/d.ts) is on no row of LAYERS: add it where it belongs',
    ]);
    expect(judgeGraph(graph, [], [['low', 'high'], ['side']]).errors).toEqual([
      'low/a.ts imports high/b.ts: low imports only from rows below its own',
      'high/b.ts imports low/c.ts: high imports only from rows below its own',
    ]);
  });
});
