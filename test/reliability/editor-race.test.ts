/**
 * Concurrent human edits: an editor-like writer saves the request file at 100 Hz (each save adds
 * one numbered line to what it just read), by temp file + rename or by rewriting the file in
 * place, while the daemon claims, the agent fails, the daemon requeues and a human re-approves,
 * over and over. Figure: human lines lost (must be 0) over N seconds.
 */
import { spawn } from 'node:child_process';
import { writeFile } from 'node:fs/promises';
import { describe, expect, it } from 'vitest';
import {
  events,
  read,
  tagsOf,
  useDaemonHarness,
  waitForReady,
  waitForText,
} from '../helpers/daemon-harness.js';
import { runCli } from '../helpers/run-cli.js';
import { waitFor } from '../helpers/wait-for.js';
import { countBy, FAST, recordFigure, scale } from './support.js';

const SECONDS = scale(4, 60);

/** Saves every 10 ms until stdin closes; prints how many lines it wrote. */
const EDITOR = `
const fs = require('node:fs');
const path = require('node:path');
const { EDITOR_FILE: file, EDITOR_MODE: mode } = process.env;
const temp = path.join(path.dirname(file), '.' + path.basename(file) + '.swp');
let n = 0;
let stop = false;
process.stdin.on('data', () => {}).on('end', () => (stop = true));
const tick = () => {
  if (stop) return process.stdout.write(n + '\\n');
  const text = fs.readFileSync(file, 'utf8');
  const next = text + 'human line ' + n + '\\n';
  if (mode === 'rename') {
    fs.writeFileSync(temp, next);
    fs.renameSync(temp, file);
  } else {
    fs.writeFileSync(file, next);
  }
  n++;
  setTimeout(tick, 10);
};
tick();
`;

const s = useDaemonHarness(FAST);

describe('an editor saving at 100 Hz while the daemon claims and requeues', () => {
  for (const mode of ['rename', 'in-place'] as const) {
    it(
      `${mode} saves: no human line is lost over ${SECONDS} s`,
      async () => {
        const file = s.file('REQ.md');
        await writeFile(file, '# R\n**Tags**: #delegated-fix\n\nHuman text.\n');
        const d = s.start(['--debounce-ms', '0', '--max-agents', '1'], { TEST_AGENT_MODE: 'exit' });
        await waitForReady(d);
        const editor = s.children.track(
          spawn(process.execPath, ['-e', EDITOR], {
            env: { ...process.env, EDITOR_FILE: file, EDITOR_MODE: mode },
            stdio: ['pipe', 'pipe', 'pipe'],
          }),
        );
        let out = '';
        let err = '';
        editor.stdout?.setEncoding('utf8').on('data', (x: string) => (out += x));
        editor.stderr?.setEncoding('utf8').on('data', (x: string) => (err += x));
        const editorExit = new Promise((resolve) => editor.once('exit', resolve));

        // The human re-approves whatever the daemon requeued, for SECONDS; in-place saves go on
        // until the daemon has requeued at least once while they run (on a loaded machine the
        // first claim alone can take seconds), so that race is always exercised.
        const requeued = () => events(s.root).filter((e) => e.event === 'requeued').length;
        const started = Date.now();
        const until = started + SECONDS * 1000;
        const deadline = until + 60_000;
        const saving = () =>
          Date.now() < until || (mode === 'in-place' && requeued() === 0 && Date.now() < deadline);
        let approvals = 0;
        while (saving()) {
          await waitFor(async () => tagsOf(await read(file)).includes('#needs-fix') || !saving(), {
            timeoutMs: deadline - Date.now() + 20_000,
            intervalMs: 20,
          });
          if (!saving()) break;
          const r = await runCli(['tag', 'approve', file, '--to', 'delegated']);
          if (r.code === 0) approvals++;
        }
        const requeuesDuringSaves = requeued();
        const savedFor = Math.round((Date.now() - started) / 1000);
        editor.stdin?.end();
        await editorExit;
        const written = Number(out.trim());
        expect(err).toBe('');
        // Once the saves stop, nothing stays stuck: the failing agent's claim ends requeued.
        const text = await waitForText(file, (now) => tagsOf(now).includes('#needs-fix'), {
          timeoutMs: 30_000,
          message: 'the claim to end requeued after the saves stopped',
        }).catch(async (error: unknown) => {
          const head = (await read(file)).slice(0, 300);
          throw new Error(
            `${String(error)}; the file starts ${JSON.stringify(head)}; daemon:\n${d.output().slice(-3000)}`,
          );
        });
        const seen = countBy(
          text.split('\n').filter((l) => l.startsWith('human line ')),
          (l) => l,
        );
        const lost = Array.from({ length: written }, (_, i) => i).filter(
          (i) => !seen.has(`human line ${i}`),
        );
        const claims = events(s.root).filter((e) => e.event === 'claimed').length;
        const requeues = events(s.root).filter((e) => e.event === 'requeued').length;
        const agentsPerSession = countBy(s.agents(), (a) => a.session);
        const duplicateAgents = [...agentsPerSession.values()].filter((n) => n > 1).length;
        recordFigure('editor-race', {
          mode,
          seconds: savedFor,
          saves: written,
          lostLines: lost.length,
          claims,
          requeues,
          requeuesDuringSaves,
          approvals,
          gaveUp: (d.output().match(/kept changing/g) ?? []).length,
          duplicateAgents,
        });
        expect(d.child.exitCode, d.output().slice(-3000)).toBeNull();
        expect(claims, 'the daemon claimed while the editor saved').toBeGreaterThan(0);
        // A rename save every 10 ms replaces the file faster than a compare-and-swap can verify
        // it: the requeue then waits until the saves stop (checked below), losing nothing.
        if (mode === 'in-place') {
          expect(
            requeuesDuringSaves,
            `the daemon requeued while the editor saved; ${d.output().slice(-1500)}`,
          ).toBeGreaterThan(0);
        }
        expect(duplicateAgents).toBe(0);
        expect(text.includes('Human text.'), 'the original human text').toBe(true);
        // An editor that saves by rename takes no lock: when its rename lands between the
        // writer's last check and its own rename (one synchronous step, but the writer can be
        // descheduled in between), that one save is replaced. At this rate about one contested
        // write in ten loses a save (docs/RELIABILITY.md); without the check, saves are lost by
        // the dozen. No portable conditional rename exists. In-place saves lose nothing.
        const allowed = mode === 'rename' ? Math.ceil(written / 50) : 0;
        expect(
          lost.length,
          `lost ${lost.length} of ${written} human lines: ${lost.join(', ')}`,
        ).toBeLessThanOrEqual(allowed);
      },
      180_000 + SECONDS * 2000,
    );
  }
});
