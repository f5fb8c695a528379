/**
 * The text of a markdown source: which bytes the locator reads (UTF-8, not binary, at most
 * MAX_PARSE_BYTES) and the BOM a write puts back. Pure; files/ reads and writes request files
 * with it, and `find`'s prefilter reads with it, so both accept the same files.
 */

/** Files larger than this are never parsed: remark needs seconds per megabyte. */
export const MAX_PARSE_BYTES = 1024 * 1024;

const BOM = '\uFEFF';
const decoder = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });

export interface TextFile {
  /** The content without a leading BOM. */
  text: string;
  bom: boolean;
}

/** Decodes bytes as UTF-8, or returns null when they are not (or look binary). */
export function decodeText(bytes: Uint8Array): TextFile | null {
  if (bytes.subarray(0, 8192).includes(0)) return null;
  let text: string;
  try {
    text = decoder.decode(bytes);
  } catch {
    return null;
  }
  const bom = text.startsWith(BOM);
  return { text: bom ? text.slice(1) : text, bom };
}

export function encodeText(file: TextFile): Buffer {
  return Buffer.from(file.bom ? BOM + file.text : file.text, 'utf8');
}
