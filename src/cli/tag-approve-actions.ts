import { emitKeypressEvents } from 'node:readline';
import {
  describePlace,
  listApprovalItems,
  type ApprovalItem,
  type ApprovalList,
  type ContextLine,
} from '../approve/approval-items.js';
import { approveFile, type ApproveTarget } from '../approve/approve-edits.js';
import {
  formatSummary,
  reviewItems,
  type Decision,
  type ReviewIO,
  type ReviewStep,
} from '../approve/review-items.js';
import { EngineError } from '../errors.js';
import { LineIndex } from '../tags/line-index.js';
import { parseLineNumber } from './arguments.js';
import { requireComplete, requireGivenPaths } from './given-paths.js';
import { printJson, printLine, warn } from './output.js';

export interface ApproveArgs {
  paths: string[];
  to?: string;
  inline?: string;
  list: boolean;
  json: boolean;
}

const TARGETS: readonly ApproveTarget[] = ['delegated', 'next'];

type Args = ApproveArgs;

/** `engine tag approve`: --list, --to, or the interactive walk. */
export async function approve(args: Args): Promise<void> {
  if (args.list) return listItems(args);
  if (args.json) throw new EngineError('--json goes with --list');
  if (args.to !== undefined) return approveOne(args);
  if (args.inline !== undefined) {
    throw new EngineError('--inline goes with --to delegated|next');
  }
  if (!process.stdin.isTTY) {
    throw new EngineError(
      'stdin is not a terminal: use --to delegated|next <file> to approve one file, or --list to see the pending items',
    );
  }
  await interactive(args.paths);
}

async function listItems(args: Args): Promise<void> {
  if (args.to !== undefined) throw new EngineError('--list changes nothing: leave out --to');
  if (args.inline !== undefined) throw new EngineError('--inline goes with --to, not --list');
  const { items, skipped } = await pendingItems(args.paths);
  if (args.json) {
    printJson(
      items.map(({ path, title, tag, line, column, place }) => ({
        path,
        title,
        tag,
        line,
        column,
        place,
      })),
    );
    return requireComplete(skipped.length);
  }
  for (const item of items) {
    printLine(`${item.path}:${item.line}  ${item.tag}  (${placeLabel(item)})  ${item.title}`);
  }
  requireComplete(skipped.length);
}

/**
 * The items under `paths`, each skipped file said (requireComplete then makes the exit 2); a
 * path that is not there is an error, as for `engine tag find`.
 */
async function pendingItems(paths: string[]): Promise<ApprovalList> {
  requireGivenPaths(paths, 'file or directory');
  const listed = await listApprovalItems(paths);
  for (const s of listed.skipped) warn(`skipped ${s.path}: ${s.reason}`);
  return listed;
}

async function approveOne(args: Args): Promise<void> {
  const to = args.to as string;
  if (!TARGETS.includes(to as ApproveTarget)) {
    throw new EngineError(`Invalid --to '${to}': expected delegated or next`);
  }
  if (args.paths.length !== 1) {
    throw new EngineError(`--to takes exactly one file (got ${args.paths.length} paths)`);
  }
  await approveFile(args.paths[0] as string, to as ApproveTarget, parseLineNumber(args.inline));
}

function placeLabel(item: Pick<ApprovalItem, 'place'>): string {
  if (item.place === 'tags-line') return 'Tags line';
  if (item.place === 'front-matter') return 'front matter';
  return 'inline';
}

// --- the interactive walk ----------------------------------------------------------------------

// Every key's meaning is spelled out: `n` was read as "no" when it picked an item for the next
// skill (`#next-X`), so `n` is no key here, and the key that leaves a file alone is `s` or Enter.
const PROMPT = 'a approve | s/Enter skip | x next skill (#next-X) | d drop | v view | q quit > ';
const KEYS: Record<string, Decision> = {
  a: 'approve',
  s: 'skip',
  return: 'skip',
  enter: 'skip',
  x: 'next',
  d: 'drop',
  v: 'view',
  q: 'quit',
};
/** The word echoed for each decision, so the screen says what the key did. */
const SAID: Record<Decision, string> = {
  approve: 'approve',
  skip: 'skip',
  next: 'next skill',
  drop: 'drop',
  view: 'view',
  quit: 'quit',
};

async function interactive(paths: string[]): Promise<void> {
  const { items, skipped } = await pendingItems(paths);
  if (items.length === 0) {
    printLine(`No #needs- items in ${paths.join(' ')}`);
    return requireComplete(skipped.length);
  }
  const keys = new KeyReader(process.stdin);
  let summary;
  try {
    summary = await reviewItems(items, terminalIO(keys));
  } finally {
    keys.close();
  }
  printLine();
  printLine(formatSummary(summary));
  if (keys.signal) throw new EngineError(`Interrupted by ${keys.signal}`);
  requireComplete(skipped.length);
}

function terminalIO(keys: KeyReader): ReviewIO {
  return {
    show: (step) => {
      const { item } = step;
      printLine();
      printLine(`[${step.index}/${step.total}] ${item.path}`);
      printLine(`  ${item.title}`);
      printLine(`  ${item.tag} ${describePlace(item)}`);
      printContext(step.context, item.line);
    },
    ask: async () => {
      process.stdout.write(PROMPT);
      for (;;) {
        const key = await keys.next();
        const decision = decisionOf(key);
        if (decision) {
          printLine(SAID[decision]);
          return decision;
        }
        printLine();
        process.stdout.write(`${unknownKeyHint(key)} ${PROMPT}`);
      }
    },
    view: (step: ReviewStep) => {
      printLine(`--- ${step.item.path}`);
      const lines = new LineIndex(step.text);
      const width = String(lines.count).length;
      for (let k = 1; k <= lines.count; k++) {
        printLine(
          `${k === step.item.line ? '>' : ' '} ${String(k).padStart(width)} | ${lines.lineText(k)}`,
        );
      }
      printLine('---');
    },
    report: (message) => printLine(`  ${message}`),
  };
}

function printContext(context: ContextLine[], line: number): void {
  const width = String(context[context.length - 1]?.line ?? line).length;
  for (const c of context) {
    printLine(`  ${c.line === line ? '>' : ' '} ${String(c.line).padStart(width)} | ${c.text}`);
  }
}

function unknownKeyHint(key: Key): string {
  if (key.name === 'n')
    return 'n is not a key here: s or Enter skips (file untouched), x picks it for your next skill (#next-X).';
  return 'Press a, s (or Enter), x, d, v or q.';
}

function decisionOf(key: Key): Decision | undefined {
  if (key.quit) return 'quit';
  if (key.ctrl || key.meta || !key.name) return undefined;
  return KEYS[key.name.toLowerCase()];
}

interface Key {
  name?: string;
  ctrl?: boolean;
  meta?: boolean;
  /** Ctrl-C, Ctrl-D, or a signal: leave the walk. */
  quit?: boolean;
}

/**
 * One keypress at a time from a terminal in raw mode. The terminal's mode is restored on
 * close, on exit, and on SIGTERM/SIGHUP (which end the walk like `q`).
 */
class KeyReader {
  private readonly queue: Key[] = [];
  private waiting: ((key: Key) => void) | null = null;
  private readonly wasRaw: boolean;
  private closed = false;
  signal: NodeJS.Signals | null = null;

  private readonly onKeypress = (_text: string | undefined, key: Key | undefined): void => {
    if (!key) return;
    const quit = key.ctrl === true && (key.name === 'c' || key.name === 'd');
    this.push(quit ? { quit: true } : { name: key.name, ctrl: key.ctrl, meta: key.meta });
  };

  private readonly onSignal = (signal: NodeJS.Signals): void => {
    this.signal ??= signal;
    this.restore();
    this.push({ quit: true });
  };

  private readonly restore = (): void => {
    if (this.input.isTTY && this.input.isRaw !== this.wasRaw) this.input.setRawMode(this.wasRaw);
  };

  constructor(private readonly input: NodeJS.ReadStream) {
    this.wasRaw = input.isRaw === true;
    emitKeypressEvents(input);
    input.setRawMode(true);
    input.on('keypress', this.onKeypress);
    process.on('exit', this.restore);
    process.on('SIGTERM', this.onSignal);
    process.on('SIGHUP', this.onSignal);
    input.resume();
  }

  next(): Promise<Key> {
    const key = this.queue.shift();
    if (key) return Promise.resolve(key);
    return new Promise((resolve) => (this.waiting = resolve));
  }

  close(): void {
    if (this.closed) return;
    this.closed = true;
    this.restore();
    this.input.off('keypress', this.onKeypress);
    this.input.pause();
    process.off('exit', this.restore);
    process.off('SIGTERM', this.onSignal);
    process.off('SIGHUP', this.onSignal);
  }

  private push(key: Key): void {
    const waiting = this.waiting;
    if (waiting) {
      this.waiting = null;
      waiting(key);
    } else {
      this.queue.push(key);
    }
  }
}
