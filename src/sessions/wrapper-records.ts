/**
 * Reads what the agent wrapper (src/sessions/wrapper-script.ts) wrote beside `.state.json`: its
 * identity (`.wrapper`), the agent's (`.agent`), the exit code (`.exit`) and the heartbeat
 * (`.heartbeat`'s mtime). Each file is renamed into place whole; one that is missing, or does not
 * hold every field it must, counts as not written yet.
 */
import { readFile, stat } from 'node:fs/promises';
import { sessionDir } from './session-dir.js';


export interface WrapperRecords {
  wrapper: { pid: number; startTicks: string; bootId: string; host: string; pane: string | null } | null;
  agent: { pid: number; startTicks: string } | null;
  exit: { code: number; at: string } | null;
  /** ISO time of the last heartbeat. */
  heartbeat: string | null;
}

const PID = /^[1-9]\d{0,9}$/;
const TICKS = /^\d+$/;
const PANE = /^%\d+$/;

export async function readWrapperRecords(dir: string): Promise<WrapperRecords> {
  const files = sessionDir(dir);
  const [wrapper, agent, exit, heartbeat] = await Promise.all([
    readFields(files.wrapper),
    readFields(files.agent),
    readFields(files.exit, true),
    mtimeOf(files.heartbeat),
  ]);
  return {
    wrapper:
      wrapper &&
      PID.test(wrapper.fields.pid ?? '') &&
      TICKS.test(wrapper.fields.start ?? '') &&
      wrapper.fields.boot &&
      wrapper.fields.host
        ? {
            pid: Number(wrapper.fields.pid),
            startTicks: wrapper.fields.start as string,
            bootId: wrapper.fields.boot,
            host: wrapper.fields.host,
            pane: PANE.test(wrapper.fields.pane ?? '') ? (wrapper.fields.pane as string) : null,
          }
        : null,
    agent:
      agent && PID.test(agent.fields.pid ?? '') && TICKS.test(agent.fields.start ?? '')
        ? { pid: Number(agent.fields.pid), startTicks: agent.fields.start as string }
        : null,
    exit:
      exit?.mtime && /^\d{1,3}$/.test(exit.fields.code ?? '')
        ? { code: Number(exit.fields.code), at: exit.mtime }
        : null,
    heartbeat,
  };
}

interface Fields {
  fields: Record<string, string>;
  mtime: string | null;
}

/** `key=value` lines; null when the file is missing or unreadable. */
async function readFields(path: string, withTime = false): Promise<Fields | null> {
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch {
    return null;
  }
  const fields: Record<string, string> = {};
  for (const line of text.split('\n')) {
    const eq = line.indexOf('=');
    if (eq > 0) fields[line.slice(0, eq)] = line.slice(eq + 1);
  }
  return { fields, mtime: withTime ? await mtimeOf(path) : null };
}

async function mtimeOf(path: string): Promise<string | null> {
  return stat(path).then(
    (info) => new Date(info.mtimeMs).toISOString(),
    () => null,
  );
}
