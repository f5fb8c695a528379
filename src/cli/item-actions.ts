/**
 * The handlers of `engine cancel`, `engine retry` and `engine close` (src/actions/): each finds the
 * project root as `engine attach` does (the request file's project, or `--root`), acts on one
 * item, and prints what it did, or `--json`.
 */
import { dirname, resolve } from 'node:path';
import { projectActionContext, type ActionContext } from '../actions/action-context.js';
import { cancelItem } from '../actions/cancel-item.js';
import { closeItem } from '../actions/close-item.js';
import { retryItem } from '../actions/retry-item.js';
import { EngineError } from '../errors.js';
import { createLogger } from './logger.js';
import { printJson, printLine } from './output.js';
import { projectRoot } from './project-root.js';

export interface ItemArgs {
  file: string;
  noun?: string;
  root?: string;
  json: boolean;
  /** `engine cancel`: seconds from SIGTERM to SIGKILL. */
  grace?: number;
}

async function contextOf(args: ItemArgs): Promise<ActionContext> {
  const root = await projectRoot(args.root, dirname(resolve(args.file)));
  const grace = args.grace ?? 10;
  if (!Number.isFinite(grace) || grace < 0)
    throw new EngineError(`--grace ${String(args.grace)}: expected seconds, 0 or more`);
  return projectActionContext(root, process.env, {
    log: createLogger('text'),
    graceMs: grace * 1000,
  });
}

export async function cancel(args: ItemArgs): Promise<void> {
  const done = await cancelItem(await contextOf(args), args.file, args.noun);
  if (args.json) return printJson(done);
  const how =
    done.ended === 'gone'
      ? 'no agent was running'
      : `its agent (pid ${String(done.agentPid)}) ended on ${done.ended}`;
  printLine(`Cancelled ${args.file}: ${how}; it is ${done.to} now (${done.session})`);
}

export async function retry(args: ItemArgs): Promise<void> {
  const done = await retryItem(await contextOf(args), args.file, args.noun);
  if (args.json) return printJson(done);
  const held = done.heldUntil === null ? '' : ` (it was held until ${done.heldUntil})`;
  const what = done.from === done.to ? `stays ${done.to}` : `${done.from} -> ${done.to}`;
  printLine(
    `Retried ${args.file}: ${what}, claimed as soon as a daemon may, with no backoff${held}`,
  );
}

export async function close(args: ItemArgs): Promise<void> {
  const done = await closeItem(await contextOf(args), args.file, args.noun);
  if (args.json) return printJson(done);
  printLine(`Closed the agent of ${args.file} (pid ${done.agentPid}, ${done.session})`);
}
