/**
 * What a request says it waits for: its `**Depends On**:` lines and its front matter
 * `depends_on:` key (docs/TAGS.md, "Depends On"). Pure. The lines are found like the Session
 * line: a line that starts with the prefix, outside code, as the one locator decides; every such
 * line counts. The entries are returned as written (paths relative to the project root, or
 * globs); dispatch/depends-on judges them.
 */
import type { TagScan } from './tag-scan-types.js';

const PREFIX = '**Depends On**:';
/** An entry written as a code span, so that markdown leaves a glob's `*` alone. */
const CODE_SPAN = /^`([^`]+)`$/;

/** The entries of the Depends On lines and `depends_on:`, each once, in the order written. */
export function dependsOnOf(scan: TagScan): string[] {
  const entries = [...scan.frontMatterDependsOn];
  for (let line = 1; line <= scan.lines.count; line++) {
    const text = scan.lines.lineText(line);
    if (text.startsWith(PREFIX) && scan.isProse(line))
      entries.push(...dependencyEntries(text.slice(PREFIX.length)));
  }
  return [...new Set(entries)];
}

/**
 * The entries of one value: separated by commas or white space, except inside a glob's braces
 * (`{a,b}`); an entry may be a code span (`` `sessions/*.md` ``).
 */
export function dependencyEntries(value: string): string[] {
  const entries: string[] = [];
  let current = '';
  let depth = 0;
  const end = (): void => {
    const entry = CODE_SPAN.exec(current)?.[1]?.trim() ?? current;
    if (entry !== '') entries.push(entry);
    current = '';
  };
  for (const char of value) {
    if (depth === 0 && (char === ',' || /\s/.test(char))) {
      end();
      continue;
    }
    if (char === '{') depth++;
    else if (char === '}' && depth > 0) depth--;
    current += char;
  }
  end();
  return entries;
}
