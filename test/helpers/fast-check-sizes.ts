/**
 * A property test's maxLength is the length it means to reach. Left to itself, fast-check caps
 * every array and string at its "small" size (10 items more than twice minLength), whatever
 * maxLength says: a test of up to 200 steps made 10 at most and missed the faults it was written
 * for (found on test/index/tagged-files.test.ts). Loaded before each test file (setupFiles).
 */
import fc from 'fast-check';

fc.configureGlobal({ ...fc.readConfigureGlobal(), defaultSizeToMaxWhenMaxSpecified: true });
