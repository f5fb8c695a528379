/** `engine new NOUN "title" [--approve] [--edit] [--root DIR]`: write a request file. */
import { spawn } from 'node:child_process';
import type { CommandModule } from 'yargs';
import { EngineError, messageOf } from '../errors.js';
import { rootOption } from './arguments.js';
import { printLine } from './output.js';
import { readDispatchTable } from './paths.js';
import { projectRoot } from './project-root.js';

interface Args {
  noun: string;
  title: string;
  approve: boolean;
  edit: boolean;
  root?: string;
}

export const newCommand: CommandModule<object, Args> = {
  command: 'new <noun> <title>',
  describe:
    'Write a request file in sessions/ (date + slug) with #needs-NOUN on its Tags line, and print its path',
  builder: (yargs) =>
    yargs
      .positional('noun', {
        type: 'string',
        describe: 'The noun of a §TAG_DISPATCH row (fix, implementation, ...)',
      })
      .positional('title', { type: 'string', describe: "The request's title, its H1" })
      .option('approve', {
        type: 'boolean',
        default: false,
        describe:
          'Write #delegated-NOUN (approved: the daemon may dispatch it) instead; with --edit, once the editor exits 0',
      })
      .option('edit', {
        type: 'boolean',
        default: false,
        describe: 'Open the file in $VISUAL, else $EDITOR (run without a shell)',
      })
      .option('root', rootOption('Project root'))
      .example('$0 new fix "Login fails with an empty password"', 'a #needs-fix request')
      .example('$0 new implementation "CSV export" --approve', 'approved at once')
      .example('$0 new fix "Flaky upload test" --edit', 'then write its body in $EDITOR') as never,
  handler: async (args) => {
    // Loaded only when this command runs, as the other commands' implementations are.
    const { parseDispatchTable } = await import('../dispatch/dispatch-table.js');
    const { checkNoun, writeNewRequest } = await import('../init/new-request.js');
    const root = await projectRoot(args.root);
    // Before anything is written: an --edit that cannot open an editor writes nothing.
    const editor = args.edit ? await editorOf() : null;
    const used = await readDispatchTable(root);
    checkNoun(args.noun, parseDispatchTable(used.text, used.path), used.path);
    // With --edit, approved only once the editor exits 0: a #delegated placeholder written before
    // it opens would be claimed by a running daemon while the body is still being written.
    const path = await writeNewRequest(
      root,
      { noun: args.noun, title: String(args.title), approve: args.approve && editor === null },
      new Date(),
    );
    printLine(path);
    if (editor === null) return;
    await openEditor(editor, path, args.approve);
    if (!args.approve) return;
    const { swapTagInFile } = await import('../files/tag-file.js');
    await swapTagInFile(path, [`#needs-${args.noun}`], `#delegated-${args.noun}`);
  },
};

async function editorOf(): Promise<string[]> {
  const { editorArgv } = await import('../init/editor-command.js');
  return editorArgv(process.env);
}

/** Runs the editor on the terminal, waiting for it; the file stays written whatever it does. */
async function openEditor(editor: string[], path: string, approve: boolean): Promise<void> {
  const [program = '', ...rest] = [...editor, path];
  const code = await new Promise<number | string>((resolve, reject) => {
    const child = spawn(program, rest, { stdio: 'inherit' });
    child.on('error', reject);
    child.on('exit', (exitCode, signal) => resolve(signal ?? exitCode ?? 0));
  }).catch((error: unknown) => {
    throw new EngineError(
      `--edit: cannot run ${program}: ${messageOf(error)} (${path} is written)`,
    );
  });
  const left = approve ? ', not approved' : '';
  if (code !== 0)
    throw new EngineError(`--edit: ${program} ended with ${code} (${path} is written${left})`);
}
