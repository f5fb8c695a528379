/**
 * The dispatch daemon: settled request files → routing through §TAG_DISPATCH → a capped
 * priority queue → claim (atomic swap + Session line) → session directory and `.state.json` →
 * agent in a runner → watch until done or dead. A periodic reaper requeues dead claims.
 * It keeps no state the files do not hold: killed at any point and restarted, it reads
 * everything back from request files and `.state.json`.
 */
import { existsSync } from 'node:fs';
import { realpath, stat } from 'node:fs/promises';
import { join, sep } from 'node:path';
import { hostname } from 'node:os';
import PQueue from 'p-queue';
import { EngineError, messageOf, PreconditionError } from '../errors.js';
import { editFile } from '../files/tag-file.js';
import { MAX_PARSE_BYTES, readRequestFile, type TextRead } from '../files/read-text-file.js';
import { fillTemplate } from '../dispatch/agent-command.js';
import { queuePriority, compareOrder } from '../dispatch/work-order.js';
import { workItemsOf, type WorkItem } from '../dispatch/work-items.js';
import type { TagOccurrence } from '../tags/scan-tags.js';
import {
  claimEdit,
  lastPriorSession,
  recoveryCount,
  restoreClaimEdit,
} from '../tags/lifecycle-edits.js';
import { lifecycleTag, parseTagPattern, type TagPattern } from '../tags/tag-name.js';
import { createSessionDir, newSessionRef, resolveSessionRef } from '../sessions/session-dir.js';
import { readSessionState, type SessionState } from '../sessions/session-state.js';
import { isOpen, transitionSession } from '../sessions/session-status.js';
import { judgeSession, type SessionVerdict } from '../sessions/judge-session.js';
import { agentEnvironment, wrapperArgv } from '../sessions/wrapper-script.js';
import { WRAPPER_FILES } from '../sessions/wrapper-records.js';
import { systemProbe } from '../process/process-identity.js';
import { walkMarkdownFiles } from '../tags/walk-markdown.js';
import { checkClaim, type ClaimVerdict } from './claim-check.js';
import { ClaimLedger } from './claim-ledger.js';
import type { DaemonContext } from './daemon-context.js';
import { RequestWatcher } from '../watch/request-watcher.js';
import { ChangeSignals } from '../watch/change-signals.js';
import { failpoint } from './failpoint.js';
import {
  isSessionDone,
  markSessionDone,
  startTokenTime,
  takeStartToken,
} from '../sessions/session-markers.js';
import { SessionIndex } from './session-index.js';

const LAUNCHES_AT_ONCE = 8;

export class Daemon {
  private readonly ctx: DaemonContext;
  private readonly queue: PQueue;
  private readonly patterns: TagPattern[];
  private readonly sessions: SessionIndex;
  private readonly watcher: RequestWatcher;
  /** Wakes the watch of a claim, or of a session, when one of the files it depends on changes. */
  private readonly signals: ChangeSignals;
  private readonly ledger = new ClaimLedger();
  private readonly warned = new Set<string>();
  private readonly inFlight = new Set<Promise<unknown>>();
  /**
   * Launches under way at once. Each waits on a record's fsync and on tmux, not on this process:
   * one at a time, a burst of 500 items started 6 agents a second on an idle 2-core machine.
   */
  private readonly launches = new PQueue({ concurrency: LAUNCHES_AT_ONCE });
  private reapTimer: NodeJS.Timeout | null = null;
  private stopping = false;
  /** --once does not wait for agents, so it adopts none. */
  private adopting = true;
  /** Whether start() ran: --dry-run and --once record no start or stop. */
  private started = false;

  constructor(ctx: DaemonContext) {
    this.ctx = ctx;
    const cap = ctx.options.maxAgents;
    // Started by start() after the first reap, so that agents adopted there take their slots
    // before any new item does.
    this.queue = new PQueue({
      concurrency: cap === 0 ? Number.POSITIVE_INFINITY : cap,
      autoStart: false,
    });
    this.patterns = ctx.options.monitor.map(parseTagPattern);
    this.sessions = new SessionIndex(ctx.options.root);
    this.signals = new ChangeSignals((error) => ctx.log('debug', `${error.message}; polling`));
    this.watcher = new RequestWatcher({
      paths: ctx.options.paths,
      debounceMs: ctx.options.debounceMs,
      rescanIntervalMs: ctx.options.rescanIntervalMs,
      watch: ctx.options.watch,
      watcher: ctx.options.watcher,
      onSettled: (path) => this.track(this.evaluate(path)),
      onError: (error) => ctx.log('warn', `watcher: ${error.message}`),
    });
  }

  /** Reaps, then watches. Resolves once the first pass over the tree has been made. */
  async start(): Promise<void> {
    const open = await this.sessions.load();
    this.started = true;
    await this.ctx.recordEvent({ event: 'daemon-started', pid: process.pid, host: hostname() });
    await this.watcher.start((path) => this.inspectAtStart(path));
    await this.reap();
    this.queue.start();
    // A new table may route items that waited for their row: those files are read again.
    this.ctx.routes.watch((files) => files.forEach((file) => void this.track(this.evaluate(file))));
    // Sessions that ended while no daemon ran get their exit recorded; running ones are followed.
    for (const dir of open) void this.track(this.recordExitWhenSeen(dir));
    this.scheduleReap();
  }

  /** One pass: reap, dispatch what is ready now (within the cap), return without waiting for agents. */
  async runOnce(): Promise<void> {
    this.adopting = false;
    await this.sessions.load();
    const items = await this.plan();
    let running = await this.reap();
    const cap = this.ctx.options.maxAgents || Number.POSITIVE_INFINITY;
    for (const item of items) {
      if (running >= cap) break;
      if (await this.claimAndSpawn(item)) running++;
    }
  }

  /** Items ready now (quiet for the debounce period), in dispatch order, changing nothing. */
  async plan(): Promise<WorkItem[]> {
    const items = await this.readyItems();
    const ready: WorkItem[] = [];
    for (const item of items) {
      const info = await stat(item.file).catch(() => null);
      // First ready first: the file that has been quiet longest.
      if (info && Date.now() - info.mtimeMs >= this.ctx.options.debounceMs) {
        ready.push({ ...item, readyAt: info.mtimeMs });
      }
    }
    return ready.sort(compareOrder);
  }

  /** Stops watching and lets a claim or spawn in progress finish; agents keep running. */
  async stop(): Promise<void> {
    this.stopping = true;
    if (this.reapTimer) clearTimeout(this.reapTimer);
    this.queue.pause();
    this.queue.clear();
    this.signals.close();
    await this.watcher.close();
    await this.ctx.routes.close();
    await Promise.allSettled([...this.inFlight]);
    if (this.started) await this.ctx.recordEvent({ event: 'daemon-stopped', pid: process.pid });
  }

  /** Resolves when nothing is queued or running (tests and --once use it). */
  onIdle(): Promise<void> {
    return this.queue.onIdle();
  }

  private track<T>(promise: Promise<T>): Promise<T> {
    this.inFlight.add(promise);
    void promise
      .catch((error: unknown) => this.ctx.log('error', String(error)))
      .finally(() => this.inFlight.delete(promise));
    return promise;
  }

  /** Reads every file that contains `delegated-` or `claimed-` (a byte prefilter), in parallel. */
  private async readyItems(): Promise<WorkItem[]> {
    const reads = new PQueue({ concurrency: 16 });
    const items: WorkItem[] = [];
    for (const root of this.ctx.options.paths) {
      for await (const path of walkMarkdownFiles(root)) {
        await reads.onSizeLessThan(64);
        void reads.add(async () => items.push(...(await this.itemsIn(path))));
      }
    }
    await reads.onIdle();
    return items;
  }

  /**
   * The start pass over one file, read once: remembers its claims for the first reap, and says
   * whether it may carry work (it then settles like a changed file and is read again).
   */
  private async inspectAtStart(path: string): Promise<boolean> {
    const read = this.read(path);
    if (!read) return false;
    if (read.bytes.includes('claimed-')) await this.itemsIn(path, read);
    return read.bytes.includes('delegated-');
  }

  /** Reads one settled file: remembers its claims, restores overwritten ones, queues work. */
  private async evaluate(path: string): Promise<void> {
    if (this.stopping) return;
    const { ledger } = this;
    for (const item of await this.itemsIn(path)) {
      const { file, noun } = item;
      // Still watched once restoreClaim is done: the claim is ending, so the file is read again
      // when it has ended. (It may end while restoreClaim reads: then go on as for any item.)
      if (
        ledger.isWatched(file, noun) &&
        !(await this.restoreClaim(item)) &&
        ledger.isWatched(file, noun)
      ) {
        ledger.hold(file, noun);
        this.ctx.log(
          'debug',
          `held ${item.file} #delegated-${item.noun} until its ending claim has ended`,
        );
        continue;
      }
      if (ledger.isQueued(file, noun) || ledger.isWatched(file, noun)) continue;
      ledger.queue(file, noun);
      let restored: boolean;
      try {
        restored = await this.restoreClaim(item);
      } catch (error) {
        ledger.unqueue(file, noun);
        throw error;
      }
      if (restored) {
        ledger.unqueue(file, noun);
        continue;
      }
      this.ctx.log(
        'debug',
        `queued ${item.file} #delegated-${item.noun} (P${item.weight}, priority ${item.tablePriority})`,
      );
      void this.queue
        .add(() => this.dispatch(item), { priority: queuePriority(item) })
        .catch((error: unknown) =>
          this.ctx.log('error', `dispatch ${item.file}: ${String(error)}`),
        );
    }
  }

  /**
   * The `#delegated-X` work items a file carries now (Tags line or front matter only), and its
   * claims remembered for the reaper. `read`: the file as just read.
   */
  private async itemsIn(path: string, read = this.read(path)): Promise<WorkItem[]> {
    const occurrences = read && (await this.scan(path, read));
    if (!occurrences) return [];
    const file = await realpath(path).catch(() => path);
    if (!(await this.isInsideWatchedPaths(file))) {
      this.warnOnce(
        `outside:${path}`,
        `skipped ${path}: it resolves to ${file}, outside the watched paths; never written through`,
      );
      return [];
    }
    const work = workItemsOf(file, occurrences, (noun) => this.ctx.routes.route(noun, path), {
      patterns: this.patterns,
      readyAt: Date.now(),
    });
    this.ledger.setClaims(
      file,
      work.claims.map((claim) => claim.noun),
    );
    if (work.items.length > 0 && (await this.hasOtherNames(file))) return [];
    return work.items;
  }

  /**
   * A request file with more than one name (a hard link) is never dispatched: the claim's rename
   * gives the claimed name a new inode, and every other name would still read `#delegated-X`
   * and be claimed and run again.
   */
  private async hasOtherNames(file: string): Promise<boolean> {
    const info = await stat(file).catch(() => null);
    if (!info || info.nlink <= 1) return false;
    this.warnOnce(
      `links:${file}:${info.ino}`,
      `skipped ${file}: it has ${info.nlink} names (hard links), and a claim would split them so that another name runs the same request again; give it one name (copy it, or remove the other links) to dispatch it`,
    );
    return true;
  }

  /**
   * A request file that may carry work or a claim (a byte prefilter); null when it does not, or
   * (a skip logged once) cannot be read. Synchronous on purpose (see readRequestFile).
   */
  private read(path: string): TextRead | null {
    const read = readRequestFile(path, ['delegated-', 'claimed-']);
    if (read.kind === 'text') return read;
    if (read.kind === 'not-text') return this.skip(path, 'not UTF-8 text');
    if (read.kind === 'too-large') return this.skip(path, `larger than ${MAX_PARSE_BYTES} bytes`);
    if (read.kind === 'error')
      return this.skip(path, `cannot read: ${read.error.code ?? read.error.message}`);
    return null;
  }

  /** The tags of a file read by `read`, or null. */
  private async scan(path: string, read: TextRead): Promise<TagOccurrence[] | null> {
    try {
      const { occurrences, problems } = await this.ctx.scan(read.file.text);
      for (const { line, message } of problems) {
        this.warnOnce(`problem:${path}:${line}:${message}`, `${path}:${line}: ${message}`);
      }
      return occurrences;
    } catch (error) {
      return this.skip(path, error instanceof Error ? error.message : String(error));
    }
  }

  private skip(path: string, reason: string): null {
    this.warnOnce(`skip:${path}:${reason}`, `skipped ${path}: ${reason}`);
    return null;
  }

  private warnOnce(key: string, message: string): void {
    if (this.warned.has(key)) return;
    this.warned.add(key);
    this.ctx.log('warn', message);
  }

  /**
   * An editor that read before our claim and saved after it puts `#delegated-X` back while the
   * claim's agent lives. Restore the claim; never start a second agent. True when restored.
   */
  private async restoreClaim(item: WorkItem): Promise<boolean> {
    for (const ref of this.sessions.sessionsOf(item.file)) {
      const dir = resolveSessionRef(this.ctx.options.root, ref);
      if (!dir) continue;
      const read = await readSessionState(dir);
      if (!('state' in read) || read.state.noun !== item.noun || !isOpen(read.state.status))
        continue;
      if (await isSessionDone(dir)) continue;
      if (!(await this.judge(dir, read.state)).alive) continue;
      try {
        await editFile(item.file, (text) => restoreClaimEdit(text, item.noun, ref));
      } catch (error) {
        if (error instanceof PreconditionError) return true;
        throw new EngineError(
          `could not restore the claim on ${item.file} (#claimed-${item.noun}, ${ref}): ${messageOf(error)}`,
          { cause: error },
        );
      }
      this.ctx.log(
        'warn',
        `restored the claim on ${item.file}: an older copy was saved over it while ${ref} runs`,
      );
      await this.ctx.recordEvent({
        event: 'claim-restored',
        file: item.file,
        noun: item.noun,
        session: ref,
      });
      return true;
    }
    return false;
  }

  private watchedRoots: string[] | null = null;

  private async isInsideWatchedPaths(file: string): Promise<boolean> {
    this.watchedRoots ??= await Promise.all(
      this.ctx.options.paths.map((p) => realpath(p).catch(() => p)),
    );
    return this.watchedRoots.some((root) => file === root || file.startsWith(`${root}${sep}`));
  }

  /**
   * Whether the session still works on its item: its wrapper alive, or its agent, which outlives
   * a wrapper killed on its own (so a claim is never restored past, or dispatched again over, a
   * live agent), or still within its grace period to start.
   */
  private async judge(dir: string, state: SessionState): Promise<SessionVerdict> {
    const records = { startTokenAt: await startTokenTime(dir) };
    return judgeSession(state, records, this.ctx.now(), this.ctx.options, systemProbe);
  }

  /** A queue task: claim and spawn, then hold the slot until the agent's claim ends. */
  private async dispatch(item: WorkItem): Promise<void> {
    this.ledger.unqueue(item.file, item.noun);
    if (this.stopping) return;
    // Watched from the claim on: the reaper must not judge a claim whose launch is still queued.
    this.ledger.watch(item.file, item.noun);
    try {
      // A failure is logged by track(); the task ends with it.
      const ref = await this.track(this.claimAndSpawn(item)).catch(() => null);
      if (ref) await this.watchUntilEnded(item.file, item.noun, ref);
    } finally {
      this.unwatch(item.file, item.noun);
    }
  }

  /** The claim's watch is over: a file held meanwhile (see ClaimLedger) is read again now. */
  private unwatch(file: string, noun: string): void {
    if (this.ledger.unwatch(file, noun) && !this.stopping) void this.track(this.evaluate(file));
  }

  /** Claim first, then the session and its record, then the agent. Returns the session ref. */
  private async claimAndSpawn(item: WorkItem): Promise<string | null> {
    const { options } = this.ctx;
    failpoint('after-read');
    // A live session already on this item (an editor saved an older copy over its claim):
    // restore that claim instead of starting a second agent.
    if (await this.restoreClaim(item)) return null;
    // Linked since it was read: checked again right before the claim.
    if (await this.hasOtherNames(item.file)) return null;
    const ref = newSessionRef(item.noun, item.file, this.ctx.now());
    let attempt = 1;
    let priorSession: string | null = null;
    try {
      await editFile(item.file, (text) => {
        attempt = recoveryCount(text) + 1;
        priorSession = lastPriorSession(text);
        return claimEdit(text, item.noun, ref);
      });
    } catch (error) {
      if (error instanceof PreconditionError) {
        this.ctx.log(
          'debug',
          `claim lost on ${item.file} (#delegated-${item.noun} no longer there)`,
        );
        return null;
      }
      // Not claimed: the item stays approved, tried again when its file changes or at a restart.
      this.ctx.log(
        'error',
        `could not claim ${item.file} (#delegated-${item.noun}): ${messageOf(error)}`,
      );
      return null;
    }
    failpoint('after-claim');
    this.sessions.add(item.file, ref);
    this.ctx.log('info', `claimed ${item.file} (#claimed-${item.noun}) → ${ref}`);
    await this.ctx.recordEvent({
      event: 'claimed',
      file: item.file,
      noun: item.noun,
      session: ref,
      attempt,
    });
    const dir = await createSessionDir(options.root, ref);
    failpoint('after-session-dir');
    const now = this.ctx.now().toISOString();
    const agentArgv = fillTemplate(options.agentTemplate, {
      skill: item.skill,
      noun: item.noun,
      file: item.file,
      session: dir,
      tag: lifecycleTag('claimed', item.noun),
    });
    const state: SessionState = {
      version: 1,
      status: 'starting',
      pid: null,
      startTicks: null,
      bootId: null,
      host: hostname(),
      agentPid: null,
      agentStartTicks: null,
      skill: item.skill,
      noun: item.noun,
      tag: lifecycleTag('claimed', item.noun),
      requestFile: item.file,
      root: options.root,
      sessionRef: ref,
      exitCode: null,
      startedAt: now,
      lastHeartbeat: null,
      endedAt: null,
      attempt,
      priorSession,
      runner: options.runner,
      tmux:
        options.runner === 'tmux'
          ? { socket: options.tmuxSocket, session: options.tmuxSession, window: null, pane: null }
          : null,
      agentArgv,
      heartbeatMs: options.heartbeatMs,
      reason: null,
    };
    try {
      // The record is written right before its own launch, so the grace period for a wrapper to
      // start counts from the launch, not from the time spent waiting for a launch slot.
      const launched = await this.launches.add(async () => {
        state.startedAt = this.ctx.now().toISOString();
        await transitionSession(dir, null, 'starting', state, { events: this.ctx.recordEvent });
        failpoint('after-state');
        return this.ctx.runner.launch({
          name: `agent-${item.noun}-${Math.floor(Date.now() / 1000)}`,
          argv: wrapperArgv(dir, options.heartbeatMs, agentArgv),
          cwd: options.root,
          env: { ...agentEnvironment(state, dir), PATH: process.env.PATH ?? '' },
          logFile: `${dir}/transcript.log`,
        });
      });
      failpoint('after-spawn');
      this.ctx.log('info', `spawned ${launched.windowName} (${launched.target}) for ${item.file}`);
      await this.ctx.recordEvent({
        event: 'spawned',
        file: item.file,
        noun: item.noun,
        session: ref,
        pid: launched.pid,
        window: launched.windowName,
        target: launched.target,
      });
    } catch (error) {
      const reason = `spawn failed: ${error instanceof Error ? error.message : String(error)}`;
      // tmux may have started the window although the call failed: whoever takes the start
      // token first wins. If the wrapper has it, the agent runs and is watched like any other.
      if (!(await takeStartToken(dir))) {
        this.ctx.log('warn', `${reason}, but the agent started anyway (${ref}); watching it`);
        return ref;
      }
      await transitionSession(
        dir,
        'starting',
        'abandoned',
        { reason, endedAt: now },
        { events: this.ctx.recordEvent, event: { event: 'spawn-failed', reason } },
      );
      this.ctx.log('error', `${reason} (${item.file})`);
      await checkClaim(this.ctx, item.file, item.noun);
      return null;
    }
    return ref;
  }

  /**
   * Checks the claim (a condition on files) until the agent is done or its claim was requeued:
   * again whenever the request file or the session's `.agent` or `.exit` changes, and every
   * `pollMs` in any case (events are hints; a wrapper killed with -9 writes nothing).
   */
  private async watchUntilEnded(
    file: string,
    noun: string,
    session: string,
  ): Promise<ClaimVerdict | null> {
    const dir = resolveSessionRef(this.ctx.options.root, session);
    const changes = this.signals.subscribe(
      dir ? [file, join(dir, WRAPPER_FILES.agent), join(dir, WRAPPER_FILES.exit)] : [file],
    );
    let recorded = false;
    try {
      for (;;) {
        let verdict: ClaimVerdict | null = null;
        try {
          verdict = await checkClaim(this.ctx, file, noun);
        } catch (error) {
          this.ctx.log('error', `checking ${file}: ${String(error)}; will look again`);
        }
        if (verdict && verdict.kind !== 'alive' && verdict.kind !== 'unknown') {
          this.ledger.forgetClaim(file, noun);
          await this.recordEnd(file, noun, verdict);
          if (verdict.kind === 'gone' && dir) await this.followGoneRequest(file, session, dir);
          return verdict;
        }
        if (verdict?.kind === 'unknown')
          this.warnOnce(
            `unknown:${file}:${verdict.reason}`,
            `cannot judge the claim on ${file} now: ${verdict.reason}`,
          );
        if (dir && !recorded && verdict?.kind === 'alive' && verdict.state)
          recorded = await this.recordRunning(dir, verdict.state);
        if (this.stopping) return verdict;
        await changes.next(this.ctx.options.pollMs);
      }
    } finally {
      changes.close();
    }
  }

  /**
   * The request file is gone from its path (moved, or deleted) while its agent may still run. The
   * agent is never killed for it. Followed until the file is back at this path or the session
   * follows it to a new one (the claim check then judges it there, see followMovedRequest), or
   * until the agent ends: its session is then abandoned with the reason. Holds the agent's slot.
   */
  private async followGoneRequest(file: string, session: string, dir: string): Promise<void> {
    this.ctx.log(
      'warn',
      `${file} was moved or deleted while ${session} may still run; the agent is left running, and its session is followed to the request's new path under the watched paths, or ends when the agent exits`,
    );
    await this.ctx.recordEvent({ event: 'request-gone', file, session });
    // Moved, it is found under its new name by the watcher; a lost event would leave it to the
    // next reconcile pass, so look over the tree now.
    void this.track(this.watcher.reconcile());
    const changes = this.signals.subscribe([file, join(dir, WRAPPER_FILES.exit)]);
    try {
      while (!this.stopping) {
        if (existsSync(file)) return;
        const read = await readSessionState(dir);
        if (!('state' in read) || read.state.requestFile !== file) return;
        const { state } = read;
        if (isOpen(state.status) && (await this.judge(dir, state)).alive) {
          await changes.next(this.ctx.options.pollMs);
          continue;
        }
        const reason = `the request file ${file} was deleted, or moved outside the watched paths, while the agent ran`;
        const ended = await transitionSession(
          dir,
          ['starting', 'running'],
          'abandoned',
          { ...state, reason, endedAt: state.endedAt ?? this.ctx.now().toISOString() },
          {
            events: this.ctx.recordEvent,
            event: { event: 'exited', exitCode: state.exitCode, reason },
            requestFile: file,
          },
        );
        if (ended) this.ctx.log('warn', `${session} ended: ${reason}`);
        return;
      }
    } finally {
      changes.close();
    }
  }

  /**
   * Copies the wrapper's and the agent's identities into `.state.json` (`running`) once both are
   * recorded, for readers of the record. True once done, or when there is nothing to copy.
   */
  private async recordRunning(dir: string, state: SessionState): Promise<boolean> {
    if (state.status !== 'running') return state.status !== 'starting';
    if (state.agentPid === null) return false;
    await transitionSession(dir, 'starting', 'running', state, { events: this.ctx.recordEvent });
    return true;
  }

  /**
   * Follows a session until its wrapper exits (a finished item's agent usually exits right after
   * marking it done): once its `.exit` is there, copies the exit into `.state.json` (`exited`,
   * exit code, identities) and records `exited`. Gives up when the wrapper is gone without one
   * (killed, or never started within the grace period), and when the daemon stops.
   */
  private async recordExitWhenSeen(dir: string): Promise<void> {
    const changes = this.signals.subscribe([join(dir, WRAPPER_FILES.exit)]);
    try {
      let wrapperGone = false;
      while (!this.stopping) {
        const read = await readSessionState(dir);
        if (!('state' in read)) return;
        if (read.state.status === 'exited') return await this.recordExited(dir, read.state);
        // The wrapper writes `.exit` before it exits: once it is gone (an agent left alive
        // without it writes none), one more look decides.
        if (!isOpen(read.state.status) || wrapperGone) return;
        const verdict = await this.judge(dir, read.state);
        wrapperGone = !verdict.alive || verdict.by === 'agent';
        if (!wrapperGone) await changes.next(this.ctx.options.pollMs);
      }
    } finally {
      changes.close();
    }
  }

  /** Copies the wrapper's exit into `.state.json`, once (the record says `exited` from then on). */
  private async recordExited(dir: string, state: SessionState): Promise<void> {
    await transitionSession(dir, ['starting', 'running'], 'exited', state, {
      events: this.ctx.recordEvent,
      event: { event: 'exited', exitCode: state.exitCode },
    });
  }

  private async recordEnd(file: string, noun: string, verdict: ClaimVerdict): Promise<void> {
    if (verdict.kind === 'foreign') {
      this.warnOnce(`foreign:${file}\0${noun}`, `${file}: ${verdict.reason}; left alone`);
    }
    if (verdict.kind !== 'done') return;
    // The session is finished, even if its agent stays open: never restore a claim onto it.
    const dir = verdict.session ? resolveSessionRef(this.ctx.options.root, verdict.session) : null;
    if (dir) {
      await markSessionDone(dir);
      if (this.adopting) void this.track(this.recordExitWhenSeen(dir));
    }
    this.ctx.log('info', `done: ${file} (#done-${noun})`);
    await this.ctx.recordEvent({
      event: 'done',
      file,
      noun,
      session: verdict.session ?? undefined,
    });
  }

  private scheduleReap(): void {
    if (this.stopping) return;
    this.reapTimer = setTimeout(() => {
      void this.track(this.reap())
        .catch((error: unknown) => this.ctx.log('error', `reap: ${String(error)}`))
        .finally(() => this.scheduleReap());
    }, this.ctx.options.reapIntervalMs);
  }

  /**
   * Checks every known claim not watched by a queue task: adopts live ones, requeues dead ones.
   * Returns how many claims have a live agent.
   */
  async reap(): Promise<number> {
    let alive = this.ledger.watchedCount;
    for (const { file, noun } of this.ledger.knownClaims()) {
      if (this.ledger.isWatched(file, noun) || !this.ledger.hasClaim(file, noun)) continue;
      if (this.stopping) break;
      let verdict: ClaimVerdict;
      try {
        verdict = await checkClaim(this.ctx, file, noun);
      } catch (error) {
        this.ctx.log('error', `checking ${file}: ${String(error)}; will look again`);
        continue;
      }
      if (verdict.kind === 'alive') {
        alive++;
        if (verdict.state) this.adopt(file, noun, verdict.session);
        continue;
      }
      if (verdict.kind === 'unknown') {
        this.warnOnce(
          `unknown:${file}\0${noun}:${verdict.reason}`,
          `cannot judge the claim on ${file} now: ${verdict.reason}`,
        );
        continue;
      }
      this.ledger.forgetClaim(file, noun);
      await this.recordEnd(file, noun, verdict);
    }
    return alive;
  }

  /** A live agent found at start (or by the reaper) holds a slot until its claim ends. */
  private adopt(file: string, noun: string, session: string): void {
    if (!this.adopting || this.ledger.isWatched(file, noun)) return;
    this.ledger.watch(file, noun);
    // A claim followed to a moved request is known under its new path from now on.
    this.sessions.add(file, session);
    this.ctx.log('info', `adopted running agent for ${file} (${session})`);
    void this.ctx.recordEvent({ event: 'adopted', file, noun, session }).catch(() => undefined);
    void this.queue
      .add(
        async () => {
          try {
            await this.watchUntilEnded(file, noun, session);
          } finally {
            this.unwatch(file, noun);
          }
        },
        { priority: Number.MAX_SAFE_INTEGER },
      )
      .catch(() => undefined);
  }
}
