// Interface A, WhatsApp messaging (docs/service.md §2). Validates everything the service documents
// before anything is sent, then POSTs the multipart form.
import { promises as fs } from 'node:fs';
import { createReadStream } from 'node:fs';
import { basename, extname } from 'node:path';
import { Readable, Transform } from 'node:stream';
import { InputError } from './errors';
import { asList, isRecord, recordOf, type Envelope } from './decode';
import type { Call, CallContext } from './call';
import type { FilePart } from './transport';
import * as v from './validate';
import { quote } from './redact';

export const MESSAGE_TYPES = ['text', 'image', 'document', 'audio', 'template', 'contacts', 'location'] as const;
export type MessageType = (typeof MESSAGE_TYPES)[number];

/** The media formats the service takes (docs/service.md §2.4). */
export const MEDIA_FORMATS: Record<'image' | 'document' | 'audio', readonly string[]> = {
  image: ['jpg', 'jpeg', 'png'],
  document: ['pdf', 'doc', 'docx', 'ppt', 'pptx', 'xls', 'xlsx', 'txt'],
  audio: ['aac', 'm4a', 'amr', 'mp3', 'ogg', 'opus'],
};

export const LIMITS = {
  textLength: 4096,
  fileBytes: 64 * 1024 * 1024,
  ttlMin: 86_400,
  ttlMax: 2_592_000,
  /** Ours (docs/service.md §2.7): a bound so a runaway array cannot build a huge request. */
  recipients: 1000,
  contacts: 100,
};

export interface MessageInput {
  /** The registered business number. */
  from: unknown;
  /** Recipient(s); when absent, `body.to` is used. */
  to?: unknown;
  /** A string (the text of a text message) or the message body object (docs/service.md §2.2). */
  body: unknown;
  /** Delivery-status callback URL; when absent, `body.callback` is used. */
  callback?: unknown;
  /** Media for image, document and audio: a Buffer, a readable stream or a local file path; ignored for other types. */
  file?: unknown;
  filename?: unknown;
}

export interface SentMessage {
  id: string;
  mobile: string;
  [field: string]: unknown;
}

/** The checked media of a message; each attempt opens it anew (a file path) or uses it once (a stream). */
interface Media {
  open(): { files: FilePart[]; close(): void };
  repeatable: boolean;
  dispose?(): void;
}

/** Validates the input into the form fields and file part of the request (docs/service.md §2.2–2.4). */
export async function buildMessage(input: MessageInput, deferCallback = false): Promise<{ params: Record<string, string>; media?: Media; body: Record<string, unknown> }> {
  const from = v.phone('from', v.text('from', input.from, { required: true })!);
  const body = messageBody(input, deferCallback);
  const type = body.type as MessageType;
  const media = type === 'image' || type === 'document' || type === 'audio' ? await checkMedia(type, input) : undefined;
  // A deferred callback is set (and the body encoded) once the message passed: see messageCall.
  return { params: { method: 'wa', from, body: deferCallback ? '' : JSON.stringify(body) }, media, body };
}

function messageBody(input: MessageInput, deferCallback: boolean): Record<string, unknown> {
  const given = typeof input.body === 'string' ? { type: 'text', text: { message: input.body } } : v.plainObject('payload', input.body);
  if (typeof input.body !== 'string') checkDeep('payload', given, 0); // a text's body is ours: nothing to check
  // Not { ...given } (why: core/callback-events.ts). There is no `__proto__` key (checkDeep refused it), so
  // assign cannot set a prototype.
  const body: Record<string, unknown> = Object.assign({}, given);

  const rawType = v.text('type', body.type, { required: true });
  // The service's parameter table writes `contact` (docs/service.md §2.3): accept both, send `contacts`.
  const type = v.oneOf('type', rawType === 'contact' ? 'contacts' : rawType, MESSAGE_TYPES)!;
  body.type = type;

  const many = type === 'contacts' || type === 'location';
  const to = recipients(v.isEmpty(input.to) ? body.to : input.to);
  body.to = many || to.length > 1 ? to : to[0];

  if (!deferCallback) {
    const callback = v.url('callback', v.isEmpty(input.callback) ? body.callback : input.callback);
    if (callback) body.callback = callback;
    else delete body.callback;
  }

  if (body.preview_url !== undefined) {
    if (type !== 'text') throw new InputError('preview_url', `applies only to text messages, not ${type}`);
    body.preview_url = v.bool('preview_url', body.preview_url);
  }
  if (body.ttl !== undefined) throw new InputError('ttl', 'belongs in template.ttl, and only template messages have one');
  if (type !== 'template' && body.template !== undefined) {
    throw new InputError('template', `is only for template messages (ttl included), not ${type}`);
  }

  switch (type) {
    case 'text':
      body.text = textPart(body.text);
      break;
    case 'template':
      body.template = templatePart(body.template);
      break;
    case 'image':
    case 'document':
      body[type] = captionPart(type, body[type]);
      break;
    case 'audio':
      body.audio = body.audio === undefined ? {} : v.plainObject('audio', body.audio);
      break;
    case 'contacts':
      body.contacts = contactsPart(body.contacts);
      break;
    case 'location':
      body.location = locationPart(body.location);
      break;
  }
  return body;
}

function recipients(value: unknown): string[] {
  // Recipients are separated by commas (or semicolons, line breaks); a space inside a number is formatting.
  const list = v.list('to', value, /[,;\r\n]/, LIMITS.recipients, v.phone, true);
  if (!list) throw new InputError('to', "is required: give the node's To setting, msg.to or payload.to");
  return list;
}

function textPart(value: unknown): Record<string, unknown> {
  const part = typeof value === 'string' ? { message: value } : v.plainObject('text', value ?? {});
  const message = v.text('text.message', part.message, { required: true, max: LIMITS.textLength, trim: false });
  return { ...part, message };
}

function templatePart(value: unknown): Record<string, unknown> {
  if (v.isEmpty(value)) throw new InputError('template.template_name', 'is missing', 'E603');
  const t = { ...v.plainObject('template', value) };
  const name = v.text('template.template_name', t.template_name, { max: 512 });
  if (!name) throw new InputError('template.template_name', 'is missing', 'E603');
  t.template_name = name;
  if (t.namespace !== undefined) t.namespace = v.text('template.namespace', t.namespace, { max: 256 });
  if (t.policy !== undefined) t.policy = v.oneOf('template.policy', t.policy, ['deterministic', 'fallback'] as const);
  if (t.lang_code !== undefined) {
    const lang = v.text('template.lang_code', t.lang_code, { max: 16 });
    if (lang && !/^[a-z]{2,3}([_-][A-Za-z]{2,4})?$/.test(lang)) {
      throw new InputError('template.lang_code', `must be a language or locale code such as en or en_US, not "${lang}"`);
    }
    t.lang_code = lang;
  }
  if (t.params !== undefined) {
    if (!Array.isArray(t.params)) throw new InputError('template.params', `must be an array of strings, not ${v.describe(t.params)}`);
    if (t.params.length > 100) throw new InputError('template.params', `has ${t.params.length} entries; at most 100 are allowed`);
    t.params = t.params.map((p, i) => v.text(`template.params[${i}]`, p, { max: LIMITS.textLength, trim: false }) ?? '');
  }
  if (t.ttl !== undefined) {
    const ttl = v.integer('template.ttl', t.ttl, LIMITS.ttlMin, LIMITS.ttlMax);
    if (ttl === undefined) delete t.ttl; // an empty ttl is no ttl, not the text "undefined"
    else t.ttl = String(ttl);
  }
  return t;
}

function captionPart(type: 'image' | 'document', value: unknown): Record<string, unknown> {
  if (value === undefined) return {};
  const part = { ...v.plainObject(type, value) };
  if (part.caption !== undefined) part.caption = v.text(`${type}.caption`, part.caption, { max: 1024, trim: false });
  return part;
}

function locationPart(value: unknown): Record<string, unknown> {
  const loc = { ...v.plainObject('location', value ?? {}) };
  if (v.isEmpty(loc.latitude)) throw new InputError('location.latitude', 'is missing', 'E616');
  if (v.isEmpty(loc.longitude)) throw new InputError('location.longitude', 'is missing', 'E617');
  loc.latitude = v.decimal('location.latitude', loc.latitude, -90, 90);
  loc.longitude = v.decimal('location.longitude', loc.longitude, -180, 180);
  if (loc.name !== undefined) loc.name = v.text('location.name', loc.name, { max: 1000 });
  if (loc.address !== undefined) loc.address = v.text('location.address', loc.address, { max: 1000 });
  return loc;
}

const EMAIL = /^[^\s@]+@[^\s@]+\.[^\s@]+$/;

function contactsPart(value: unknown): Record<string, unknown>[] {
  if (!Array.isArray(value) || value.length === 0) throw new InputError('contacts', 'must be a non-empty array of contact objects');
  if (value.length > LIMITS.contacts) throw new InputError('contacts', `has ${value.length} entries; at most ${LIMITS.contacts} are allowed`);
  return value.map((c, i) => {
    const f = `contacts[${i}]`;
    const contact = v.plainObject(f, c);
    if (contact.birthday !== undefined) {
      const b = v.text(`${f}.birthday`, contact.birthday);
      if (b && !/^\d{4}-\d{2}-\d{2}$/.test(b)) throw new InputError(`${f}.birthday`, `must be YYYY-MM-DD, not "${b}"`);
    }
    each(contact.emails, `${f}.emails`, (e, ef) => {
      const email = v.text(`${ef}.email`, e.email);
      if (email && !EMAIL.test(email)) throw new InputError(`${ef}.email`, `is not an e-mail address: ${v.shown(email, 60)}`);
      v.oneOf(`${ef}.type`, e.type, ['HOME', 'WORK'] as const);
    });
    each(contact.phones, `${f}.phones`, (p, pf) => {
      v.text(`${pf}.phone`, p.phone, { max: 40 });
      v.oneOf(`${pf}.type`, p.type, ['CELL', 'MAIN', 'IPHONE', 'HOME', 'WORK'] as const);
      const waId = v.text(`${pf}.wa_id`, p.wa_id);
      if (waId && !/^\d{1,20}$/.test(waId)) throw new InputError(`${pf}.wa_id`, `must be digits, not ${v.shown(waId, 40)}`);
    });
    each(contact.addresses, `${f}.addresses`, (a, af) => {
      const cc = v.text(`${af}.country_code`, a.country_code);
      if (cc && !/^[A-Za-z]{2}$/.test(cc)) throw new InputError(`${af}.country_code`, `must be a two-letter country code, not "${cc}"`);
    });
    for (const key of ['name', 'org'] as const) if (contact[key] !== undefined) v.plainObject(`${f}.${key}`, contact[key]);
    for (const key of ['ims', 'urls'] as const) {
      if (contact[key] !== undefined && !Array.isArray(contact[key])) throw new InputError(`${f}.${key}`, 'must be an array');
    }
    return contact;
  });
}

function each(value: unknown, field: string, check: (item: Record<string, unknown>, f: string) => void): void {
  if (value === undefined) return;
  if (!Array.isArray(value)) throw new InputError(field, `must be an array, not ${v.describe(value)}`);
  value.forEach((item, i) => check(v.plainObject(`${field}[${i}]`, item), `${field}[${i}]`));
}

/** Rejects keys that could pollute a prototype anywhere in the body, and absurd nesting. */
function checkDeep(field: string, value: unknown, depth: number): void {
  if (depth > 16) throw new InputError(field, 'is nested too deeply');
  if (Array.isArray(value)) value.forEach((item, i) => checkDeep(`${field}[${i}]`, item, depth + 1));
  else if (isRecord(value)) {
    v.checkKeys(field, value);
    for (const [k, item] of Object.entries(value)) checkDeep(`${field}.${k}`, item, depth + 1);
  } else if (typeof value === 'number' && !Number.isFinite(value)) {
    throw new InputError(field, `must be a finite number, not ${value}`);
  }
}

// The file travels with the request, at most 64 MB, in a listed format (docs/service.md §2.4).
async function checkMedia(type: 'image' | 'document' | 'audio', input: MessageInput): Promise<Media> {
  const file = input.file;
  if (v.isEmpty(file)) throw new InputError('file', `is required for ${type} messages (msg.file: a Buffer, a stream or a file path)`);
  let filename = v.text('filename', input.filename, { max: 255 });
  let media: Media;
  if (typeof file === 'string') {
    const stat = await fs.stat(file).catch((err: NodeJS.ErrnoException) => {
      throw new InputError('file', `cannot read "${basename(file)}" (${err.code ?? err.message})`);
    });
    if (!stat.isFile()) throw new InputError('file', `"${basename(file)}" is not a file`);
    checkSize(stat.size);
    filename ??= basename(file);
    checkFormat(type, filename);
    const name = filename;
    media = {
      open: () => {
        const stream = createReadStream(file);
        return { files: [{ field: 'file', value: stream, filename: name, knownLength: stat.size }], close: () => stream.destroy() };
      },
      repeatable: true,
    };
  } else if (Buffer.isBuffer(file)) {
    checkSize(file.length);
    if (!filename) throw new InputError('filename', 'is required when msg.file is a Buffer (it gives the format)');
    checkFormat(type, filename);
    const part = { field: 'file', value: file, filename };
    media = { open: () => ({ files: [part], close: () => undefined }), repeatable: true };
  } else if (file instanceof Readable) {
    checkStream(file);
    // A stream in object mode (Readable.from() of Buffers is one) may give anything: its first chunk is
    // looked at before anything is sent; a later chunk that is no bytes aborts the upload.
    if (file.readableObjectMode) {
      const first = await peek(file);
      if (first !== null && toBytes(first) === undefined) throw new InputError('file', `is a stream of objects, not of bytes (its first chunk is ${v.describe(first)}); give Buffers or strings`);
    }
    const path = (file as Readable & { path?: unknown }).path;
    filename ??= typeof path === 'string' ? basename(path) : undefined;
    if (!filename) throw new InputError('filename', 'is required when msg.file is a stream (it gives the format)');
    checkFormat(type, filename);
    const name = filename;
    const dispose = () => file.destroy();
    media = { open: () => ({ files: [{ field: 'file', value: bytesOf(file), filename: name }], close: dispose }), repeatable: false, dispose };
  } else {
    throw new InputError('file', `must be a Buffer, a readable stream or a file path, not ${v.describe(file)}`);
  }
  return media;
}

function checkSize(bytes: number): void {
  if (bytes > LIMITS.fileBytes) throw new InputError('file', `is ${bytes} bytes; at most 64 MB (${LIMITS.fileBytes} bytes) can be sent`, 'E504');
}

function checkFormat(type: keyof typeof MEDIA_FORMATS, filename: string): void {
  const ext = extname(filename).slice(1).toLowerCase();
  if (!MEDIA_FORMATS[type].includes(ext)) {
    throw new InputError('filename', `"${filename}" is not a supported ${type} format (${MEDIA_FORMATS[type].join(', ')})`);
  }
}

/** Listens for a stream's errors at once (an 'error' without a listener ends the process) and refuses one that cannot be sent. */
export function checkStream(file: Readable): void {
  if (file.listenerCount('error') === 0) file.on('error', () => undefined); // seen through file.errored
  if (file.errored) throw streamError(file.errored);
  if (file.destroyed || file.readableEnded) throw new InputError('file', 'is a stream that was already closed or read to its end');
}

function streamError(err: unknown): InputError {
  if (err instanceof InputError) return err;
  const e = err as NodeJS.ErrnoException;
  return new InputError('file', `could not be read: ${e.code ? `${e.code} ` : ''}${quote(String(e.message ?? err), undefined, 200)}`);
}

/** The first chunk of a stream, put back; null when it ends at once. */
function peek(file: Readable): Promise<unknown> {
  return new Promise((resolve, reject) => {
    const done = (fn: () => void) => {
      file.off('readable', onReadable).off('error', onError).off('end', onEnd);
      fn();
    };
    const onReadable = () => {
      const chunk: unknown = file.read();
      if (chunk === null) return; // 'end' follows
      done(() => {
        file.unshift(chunk);
        resolve(chunk);
      });
    };
    const onError = (err: unknown) => done(() => reject(streamError(err)));
    const onEnd = () => done(() => resolve(null));
    file.on('readable', onReadable).on('error', onError).on('end', onEnd);
  });
}

function toBytes(chunk: unknown): Buffer | undefined {
  if (Buffer.isBuffer(chunk)) return chunk;
  if (typeof chunk === 'string') return Buffer.from(chunk);
  if (chunk instanceof Uint8Array) return Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength);
  return undefined;
}

/**
 * The bytes of a caller's stream, stopped at the size limit. Its errors (EISDIR, EIO mid-way) end the
 * request with an InputError: piping does not pass them on, and unheard they would end the process.
 */
function bytesOf(file: Readable): Transform {
  checkStream(file); // it may have failed while the message waited in the queue
  let seen = 0;
  const limited = new Transform({
    writableObjectMode: true, // takes what an object-mode stream gives, and lets only bytes through
    transform(chunk: unknown, _enc, done) {
      const bytes = toBytes(chunk);
      if (!bytes) return done(new InputError('file', `is a stream that gave ${v.describe(chunk)} among its bytes`));
      seen += bytes.length;
      if (seen > LIMITS.fileBytes) done(new InputError('file', `is over 64 MB (${LIMITS.fileBytes} bytes)`, 'E504'));
      else done(null, bytes);
    },
  });
  file.on('error', (err) => limited.destroy(streamError(err)));
  return file.pipe(limited);
}

/** The submission answer's data, one entry per recipient, unknown fields kept (docs/service.md §2.5). */
export function normaliseSubmission(envelope: Envelope): SentMessage[] {
  let data = envelope.data;
  // XML wraps the entries in one repeated element (<data><entry>…</entry></data>).
  if (isRecord(data)) {
    const keys = Object.keys(data);
    if (keys.length === 1 && (isRecord(data[keys[0]!]) || Array.isArray(data[keys[0]!])) && !('id' in data)) data = data[keys[0]!];
  }
  return asList(data).map((entry) => recordOf(entry, ['id', 'mobile'] as const));
}

/**
 * The checked and built request of a send, a multipart POST (docs/service.md §2.1); the payload is one
 * entry per recipient. With `deferCallback`, the callback URL is not read from the
 * input: the caller sets it with `setCallback` once the message passed (a "Report to" record is made only
 * for a message that will be sent).
 */
export async function messageCall(input: MessageInput, format?: CallContext['format'], deferCallback = false): Promise<Call<SentMessage[]>> {
  let built: Awaited<ReturnType<typeof buildMessage>>;
  try {
    built = await buildMessage(input, deferCallback);
  } catch (err) {
    // A refused message still owns the caller's stream: close it, as after a send.
    if (input.file instanceof Readable) input.file.destroy();
    throw err;
  }
  const { params, media, body } = built;
  params.format = format === 'xml' ? 'xml' : 'json'; // params is ours: added to in place (why: core/callback-events.ts)
  return {
    kind: 'send',
    method: 'POST',
    path: '/api/v4/',
    params,
    success: 'OK',
    open: media?.open,
    repeatable: media?.repeatable ?? true,
    dispose: media?.dispose,
    normalise: normaliseSubmission,
    setCallback: (url) => {
      body.callback = url;
      params.body = JSON.stringify(body);
    },
  };
}
