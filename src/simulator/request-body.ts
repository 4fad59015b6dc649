import { createHash } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import { Response } from 'undici';
import type { FileInfo } from './types';

export interface RequestBody {
  fields: Record<string, string>;
  /** The multipart part named `file`. */
  file?: FileInfo;
  /** The body was over the limit: it was read to the end and dropped unparsed. */
  tooLarge: boolean;
  /** Why the body could not be parsed, if it could not. */
  unreadable?: string;
}

class Unreadable extends Error {}

/**
 * Reads and parses a form body: multipart (undici's own parser), urlencoded, or JSON (for /sim/*).
 * A body over `limit` is still read to its end, so the client sees the answer rather than a reset
 * while it is uploading, but it is not kept.
 */
export async function readBody(req: IncomingMessage, limit: number): Promise<RequestBody> {
  const declared = Number(req.headers['content-length'] ?? 0);
  const chunks: Buffer[] = [];
  let size = 0;
  let tooLarge = declared > limit;
  for await (const chunk of req as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > limit) tooLarge = true;
    if (!tooLarge) chunks.push(chunk);
  }
  if (tooLarge || size === 0) return { fields: {}, tooLarge };

  const raw = Buffer.concat(chunks, size);
  const type = (req.headers['content-type'] ?? '').toLowerCase();
  try {
    if (type.startsWith('multipart/form-data')) return { ...(await parseMultipart(raw, req.headers['content-type']!)), tooLarge: false };
    if (type.startsWith('application/x-www-form-urlencoded')) {
      return { fields: Object.fromEntries(new URLSearchParams(raw.toString('utf8'))), tooLarge: false };
    }
    if (type.startsWith('application/json')) return { fields: parseJsonFields(raw), tooLarge: false };
  } catch (err) {
    if (err instanceof Unreadable) return { fields: {}, tooLarge: false, unreadable: err.message };
    throw err;
  }
  return { fields: {}, tooLarge: false };
}

async function parseMultipart(raw: Buffer, contentType: string): Promise<{ fields: Record<string, string>; file?: FileInfo }> {
  let form: Awaited<ReturnType<Response['formData']>>;
  try {
    form = await new Response(raw, { headers: { 'content-type': contentType } }).formData();
  } catch {
    throw new Unreadable('the multipart body could not be parsed');
  }
  const fields: Record<string, string> = {};
  let file: FileInfo | undefined;
  for (const [name, value] of form) {
    if (typeof value === 'string') {
      fields[name] = value;
    } else if (name === 'file' && !file) {
      const bytes = Buffer.from(await value.arrayBuffer());
      file = { filename: value.name, size: bytes.length, sha256: createHash('sha256').update(bytes).digest('hex') };
    }
  }
  return { fields, file };
}

/** JSON objects become string fields, as if they had been sent as a form. */
function parseJsonFields(raw: Buffer): Record<string, string> {
  let parsed: unknown;
  try {
    parsed = JSON.parse(raw.toString('utf8'));
  } catch {
    throw new Unreadable('the JSON body could not be parsed');
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) throw new Unreadable('the JSON body must be an object');
  return Object.fromEntries(
    Object.entries(parsed)
      .filter(([, v]) => v !== undefined && v !== null)
      .map(([k, v]) => [k, typeof v === 'object' ? JSON.stringify(v) : String(v)]),
  );
}
