/** `engine completion [bash|zsh]`: the shell completion script (yargs' own). */
import yargs, { type CommandModule } from 'yargs';

const SHELLS = ['bash', 'zsh'] as const;
type Shell = (typeof SHELLS)[number];

interface Args {
  shell: Shell;
}

export const completionCommand: CommandModule<object, Args> = {
  command: 'completion [shell]',
  describe:
    'Print the shell completion script for engine (commands, subcommands, flags); add it to your shell startup file',
  builder: (y) =>
    y
      .positional('shell', {
        choices: SHELLS,
        default: process.env.SHELL?.endsWith('zsh') === true ? 'zsh' : 'bash',
        describe: 'The shell the script is for (default: zsh when $SHELL is zsh, else bash)',
      })
      .example('$0 completion bash >> ~/.bashrc', 'Completion in every new bash')
      .example('$0 completion zsh >> ~/.zshrc', 'Completion in every new zsh')
      .example('source <($0 completion)', 'Completion in this shell only') as never,
  handler: (args) => {
    printScript(args.shell);
  },
};

/** yargs picks its template by $SHELL when an instance is made: made here for the shell asked. */
function printScript(shell: Shell): void {
  const before = process.env.SHELL;
  process.env.SHELL = `/bin/${shell}`;
  try {
    // @types/yargs lacks the arguments yargs 18 takes: the program and the command to name.
    const cli = yargs([]).scriptName('engine') as unknown as {
      showCompletionScript(program: string, command: string): void;
    };
    cli.showCompletionScript('engine', `completion ${shell}`);
  } finally {
    if (before === undefined) delete process.env.SHELL;
    else process.env.SHELL = before;
  }
}
