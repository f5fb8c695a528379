/**
 * Run as another user (`setpriv … node <this file bundled> '<json>'`), with a JSON array of
 * recorded identities: prints, for each, what kill(pid, 0) says for this user and how
 * checkLiveness classifies the record. Used by liveness-real.test.ts; not a test file itself.
 */
import {
  checkLiveness,
  systemProbe,
  type ProcessIdentity,
} from '../../src/process/process-identity.js';

const recorded = JSON.parse(process.argv[2] ?? '[]') as ProcessIdentity[];
const results = recorded.map((identity) => ({
  pid: identity.pid,
  uid: process.getuid?.(),
  kill0: systemProbe.kill0(identity.pid),
  liveness: checkLiveness(identity),
}));
console.log(JSON.stringify(results));
