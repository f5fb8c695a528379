/**
 * The board as the page shows it: the status report's items as cards in four lanes, attention
 * first (Needs you, Waiting, Running, Done), each card with its facts, why it is where it is,
 * the actions it offers and the CLI command each equals; with git claims, every host's claims. Pure: the report, the facts read from
 * the files, the transcript tails and the clock are given.
 */
import { relative } from 'node:path';
import type { ClaimItem, DoneItem, StatusReport, WaitingItem } from '../status/collect-status.js';
import type { NextItem } from '../status/collect-status.js';
import type { NeedsYou } from '../status/needs-you.js';
import { agentStateText } from '../status/agent-state-text.js';
import { duration, relativeTime } from '../status/relative-time.js';
import { waitText } from '../status/wait-text.js';
import type { ReportOrigin } from './board-source.js';
import type { CardFacts } from './card-facts.js';
import { queueFile, queueText } from '../status/queue-source.js';
import { hostsSection, type HostsSection } from './hosts-section.js';
import type { ApprovalPlace, ItemRef } from './item-ids.js';

export const ACTIONS = ['approve', 'next', 'cancel', 'retry', 'close'] as const;
export type ActionName = (typeof ACTIONS)[number];

export const LANES = ['needs-you', 'waiting', 'running', 'done'] as const;
export type LaneName = (typeof LANES)[number];

const LANE_TITLES: Record<LaneName, string> = {
  'needs-you': 'Needs you',
  waiting: 'Waiting',
  running: 'Running',
  done: 'Done',
};

export interface CardAction {
  name: ActionName;
  label: string;
  /** The CLI command the action equals, run from the project root. */
  command: string;
}

export interface Card {
  id: string;
  title: string;
  /** Relative to the project root. */
  file: string;
  noun: string;
  /** The item's tag as the file carries it. */
  tag: string;
  /** `P0`, `P1`, `P2`; null when the file cannot be read now. */
  priority: string | null;
  dependencies: string[];
  /** What state it is in, in words (never a colour alone). */
  state: string;
  /** Why it is here: the wait, the question, the reason. */
  why: string | null;
  details: string[];
  /** The session's transcript tail, as text. */
  tail: string | null;
  actions: CardAction[];
  /** `engine attach FILE` for a running agent. */
  attach: string | null;
}

export interface Lane {
  name: LaneName;
  title: string;
  cards: Card[];
}

export interface Board {
  root: string;
  generatedAt: string;
  readOnly: boolean;
  daemon: string;
  /** Who answered the report: `from the daemon` (its control socket) or `from the files`. */
  source: string;
  /** The usage-limit pause, in words; null when none. */
  paused: string | null;
  /** `engine resume`, offered while paused and not read-only. */
  resume: string | null;
  lanes: Lane[];
  /** With `"claims": "git"` only: every host's claims as last fetched (hosts-section.ts). */
  hosts?: HostsSection;
}

export interface ViewInputs {
  report: StatusReport;
  from: ReportOrigin;
  now: Date;
  readOnly: boolean;
  /** The opaque id of an item (item-ids.ts). */
  idOf(item: ItemRef): string;
  /** The facts of a request file; null when it cannot be read. */
  factsOf(file: string): CardFacts | null;
  /** A session's transcript tail, by its Session line; null when none. */
  tailOf(session: string): string | null;
}

export function boardView(inputs: ViewInputs): Board {
  const { report, now, readOnly } = inputs;
  const waitingAgents = new Set(
    report.needsYou.flatMap((n) => (n.kind === 'input' ? [`${n.file}\0${n.noun}`] : [])),
  );
  const lanes: Record<LaneName, Card[]> = {
    'needs-you': report.needsYou.map((n) => needCard(inputs, n)),
    waiting: [
      ...report.waiting.map((w) => waitingCard(inputs, w)),
      ...report.next.map((n) => nextCard(inputs, n)),
      ...report.stale.map((c) => staleCard(inputs, c)),
    ],
    running: report.running
      .filter((c) => !waitingAgents.has(`${c.file}\0${c.noun}`))
      .map((c) => runningCard(inputs, c)),
    done: report.done.flatMap((d) => doneCard(inputs, d)),
  };
  const cards = Object.values(lanes).flat();
  // A card of the daemon's checkout offers no action: an edit there is reset at the next sync
  // (the shared branch changes by a commit pushed from a tree, engine tag's edit included).
  if (readOnly || report.queue?.kind === 'checkout') for (const card of cards) card.actions = [];
  const paused = report.paused;
  return {
    root: report.root,
    generatedAt: now.toISOString(),
    readOnly,
    daemon: daemonText(report),
    // With git claims, which copy of the requests (the daemon's checkout, or this tree).
    source: `${inputs.from === 'daemon' ? 'from the daemon' : 'from the files'}${report.queue ? `. ${queueText(report.queue)}` : ''}`,
    paused: paused && `${paused.reason}; lifts ${relativeTime(paused.until, now)}`,
    resume: paused && !readOnly ? 'engine resume' : null,
    lanes: LANES.map((name) => ({ name, title: LANE_TITLES[name], cards: lanes[name] })),
    ...(report.hosts && { hosts: hostsSection(report.hosts, now) }),
  };
}

function daemonText({ daemon }: StatusReport): string {
  if (daemon.state === 'running') return `daemon: pid ${daemon.pid} on ${daemon.host}`;
  if (daemon.state === 'other-host') return `daemon: on host ${daemon.host}`;
  return 'daemon: none runs, so nothing is dispatched (engine run starts one)';
}

/** A request's path relative to the root; a file of the daemon's checkout by its place there. */
function shownFile({ root, queue }: StatusReport, file: string): string {
  return relative(root, queueFile(queue, root, file));
}

/** A shell word: as it is when plain, else single-quoted. */
export function shellWord(word: string): string {
  return /^[\w./@%+=:,-]+$/.test(word) ? word : `'${word.replace(/'/g, `'\\''`)}'`;
}

/** A card's base: its file's facts and its id (of the `#needs-X` it approves, if any). */
function card(
  inputs: ViewInputs,
  item: { file: string; noun: string; tag: string; title?: string },
  state: string,
  approval: ApprovalPlace | null = null,
): Card {
  const facts = inputs.factsOf(item.file);
  return {
    id: inputs.idOf({ file: item.file, noun: item.noun, approval }),
    title: facts?.title ?? item.title ?? shownFile(inputs.report, item.file),
    file: shownFile(inputs.report, item.file),
    noun: item.noun,
    tag: item.tag,
    priority: facts === null ? null : `P${facts.priority}`,
    dependencies: facts?.dependencies ?? [],
    state,
    why: null,
    details: [],
    tail: null,
    actions: [],
    attach: null,
  };
}

/** An item command of the CLI (cancel, retry, close) on this card's item. */
function itemAction(c: Card, name: 'cancel' | 'retry' | 'close', label: string): CardAction {
  return { name, label, command: `engine ${name} ${shellWord(c.file)} --noun ${c.noun}` };
}

function approveActions(c: Card, line: number | null): CardAction[] {
  const inline = line === null ? '' : ` --inline ${line}`;
  const to = (target: string) => `engine tag approve --to ${target} ${shellWord(c.file)}${inline}`;
  return [
    { name: 'approve', label: `Approve: #delegated-${c.noun}`, command: to('delegated') },
    { name: 'next', label: `Pick for next skill: #next-${c.noun}`, command: to('next') },
  ];
}

function needCard(inputs: ViewInputs, need: NeedsYou): Card {
  switch (need.kind) {
    case 'input': {
      const c = withSession(
        inputs,
        card(inputs, { ...need, tag: `#claimed-${need.noun}` }, 'agent waiting for input'),
        need.session,
      );
      c.why = need.question ?? 'its agent waits at its prompt';
      c.details = [`waiting since ${relativeTime(need.since, inputs.now)}`];
      c.actions = [itemAction(c, 'cancel', 'Cancel')];
      return c;
    }
    case 'approval': {
      const inline = need.place === 'prose';
      const state = inline ? 'waits for approval (inline)' : 'waits for approval';
      const line = inline ? need.line : null;
      // The text read with the line number (not the card facts' later read): the approve checks it.
      const lineText = line === null ? null : need.lineText;
      const c = card(inputs, need, state, { tag: need.tag, line, lineText });
      c.actions = approveActions(c, inline ? need.line : null);
      return c;
    }
    case 'given-up': {
      const c = card(inputs, need, 'given up', { tag: need.tag, line: null, lineText: null });
      c.why = need.reason;
      c.actions = [itemAction(c, 'retry', 'Retry'), ...approveActions(c, null).slice(1)];
      return c;
    }
    case 'not-dispatched': {
      const tags = need.tags.join(' ');
      const c = card(inputs, { file: need.file, noun: tags, tag: tags }, 'never dispatched');
      c.why = need.line === null ? need.reason : `line ${need.line}: ${need.reason}`;
      return c;
    }
  }
}

function waitingCard(inputs: ViewInputs, w: WaitingItem): Card {
  const c = card(inputs, { ...w, tag: `#delegated-${w.noun}` }, 'waiting');
  const daemonRuns = inputs.report.daemon.state !== 'none';
  c.why =
    w.wait === null
      ? daemonRuns
        ? 'next: a daemon claims it now'
        : 'ready once a daemon runs'
      : waitText(w.wait, inputs.now);
  c.details = [`skill ${w.skill}${w.aged ? ', aged one band up' : ''}`];
  if (w.wait?.kind === 'not-before') c.actions = [itemAction(c, 'retry', 'Retry now')];
  return c;
}

function nextCard(inputs: ViewInputs, n: NextItem): Card {
  const c = card(inputs, n, 'picked for the next skill');
  c.why = `${n.tag}: the next skill claims it, not the daemon`;
  return c;
}

function staleCard(inputs: ViewInputs, claim: ClaimItem): Card {
  const c = withSession(inputs, card(inputs, claimTag(claim), 'claim without a live agent'), null);
  c.why = `${claim.liveness}; a running daemon requeues it`;
  return c;
}

function runningCard(inputs: ViewInputs, claim: ClaimItem): Card {
  const c = withSession(inputs, card(inputs, claimTag(claim), 'running'), claim.session);
  const agent = agentStateText(claim.agentState, inputs.now);
  c.why = agent === '' ? `agent: ${claim.liveness}` : agent;
  c.details = [
    claim.attempt === null ? '' : `attempt ${claim.attempt}`,
    claim.ageSeconds === null ? '' : `running for ${duration(claim.ageSeconds * 1000)}`,
    claim.pid === null ? '' : `pid ${claim.pid}`,
    claim.session === null ? '' : `session ${claim.session}`,
  ].filter((d) => d !== '');
  c.actions = [itemAction(c, 'cancel', 'Cancel')];
  return c;
}

function claimTag(claim: ClaimItem) {
  return { file: claim.file, noun: claim.noun, tag: `#claimed-${claim.noun}` };
}

/** The card with its session's tail and, for a live agent, how to attach to it. */
function withSession(inputs: ViewInputs, c: Card, session: string | null): Card {
  if (session === null) return c;
  return { ...c, tail: inputs.tailOf(session), attach: `engine attach ${shellWord(c.file)}` };
}

function doneCard(inputs: ViewInputs, d: DoneItem): Card[] {
  if (d.file === undefined) return [];
  const noun = d.noun ?? '';
  const tag = d.event === 'done' && noun !== '' ? `#done-${noun}` : d.event;
  const c = card(inputs, { file: d.file, noun, tag }, d.event);
  c.why = d.reason ?? null;
  const cost = d.result?.costUsd;
  c.details = [
    relativeTime(d.time, inputs.now),
    cost === null || cost === undefined ? '' : `cost $${cost.toFixed(4)}`,
    d.result?.numTurns == null ? '' : `${d.result.numTurns} turns`,
  ].filter((x) => x !== '');
  if (d.event === 'done' && noun !== '') c.actions = [itemAction(c, 'close', 'Close its agent')];
  return [c];
}
