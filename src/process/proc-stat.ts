/**
 * Parsing of `/proc/<pid>/stat` (proc(5)). The second field, `comm`, is the executable name in
 * parentheses and may itself contain spaces and parentheses (`(a) b (c)`), so the fixed fields are
 * read after the LAST `)` of the line. The kernel caps comm at 15 bytes but never escapes it.
 */

export interface ProcStat {
  /** Field 1. */
  pid: number;
  /** Field 2, without the surrounding parentheses. */
  comm: string;
  /** Field 3: R, S, D, T, t, Z, X, I, … */
  state: string;
  /** Field 22: start time after boot, in clock ticks; kept as the kernel's decimal text. */
  startTicks: string;
}

const START_TIME_FIELD = 22;
/** Fields after the comm start with field 3 (state). */
const FIRST_FIELD_AFTER_COMM = 3;

/** Parses one stat line; `null` when it is not a well-formed stat line. Never throws. */
export function parseProcStat(text: string): ProcStat | null {
  const open = text.indexOf(' (');
  const close = text.lastIndexOf(')');
  if (open <= 0 || close < open + 1) return null;
  const pidText = text.slice(0, open);
  if (!/^[1-9]\d*$/.test(pidText)) return null;
  const pid = Number(pidText);
  if (!Number.isSafeInteger(pid)) return null;
  // The kernel separates fields by exactly one space and ends the line with one newline; anything
  // else (an empty field, a tab) means the line is not what we think it is.
  const rest = text.slice(close + 1).replace(/\n$/, '');
  if (!rest.startsWith(' ')) return null;
  const fields = rest.slice(1).split(' ');
  if (fields.some((field) => !/^\S+$/.test(field))) return null;
  const state = fields[0];
  const startTicks = fields[START_TIME_FIELD - FIRST_FIELD_AFTER_COMM];
  if (state === undefined || !/^[A-Za-z]$/.test(state)) return null;
  if (startTicks === undefined || !/^\d+$/.test(startTicks)) return null;
  return { pid, comm: text.slice(open + 2, close), state, startTicks };
}

/** Z (zombie) and X/x (dead, being torn down): the process has exited. */
export function isExitedState(state: string): boolean {
  return state === 'Z' || state === 'X' || state === 'x';
}
