/**
 * Interface A, send message (docs/service.md §2): validation with the service's error codes, the
 * submission response, and the delivery callbacks (§6.1).
 */
import { alnumId } from './ids';
import { appendQuery, isHttpUrl } from './callback-url';
import { invalid, rejection, type Reply } from './reply';
import type { FileInfo } from './types';
import type { CallbackSender } from './callback-sender';
import { nowSeconds } from './dates';

export const MAX_FILE_BYTES = 64 * 1024 * 1024;
const MAX_TEXT_CHARS = 4096;
const NUMBER = /^\+?\d+$/;

/** The media formats (docs/service.md §2.4), by message type. */
const MEDIA_EXTENSIONS: Record<string, readonly string[]> = {
  image: ['jpg', 'jpeg', 'png'],
  document: ['pdf', 'doc', 'docx', 'ppt', 'pptx', 'xls', 'xlsx', 'txt'],
  audio: ['aac', 'm4a', 'amr', 'mp3', 'ogg', 'opus'],
};
const TYPES = ['text', 'image', 'document', 'audio', 'template', 'contacts', 'location'];

export interface ValidSend {
  from: string;
  type: string;
  body: Record<string, unknown>;
  recipients: string[];
  callback?: string;
}

type Obj = Record<string, unknown>;
const isObject = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v);
const isBlank = (v: unknown): boolean => v === undefined || v === null || (typeof v === 'string' && v.trim() === '');

/** Throws a Rejection for the first problem found: file size, from, body, type, to, callback, then content. */
export function validateSend(fields: Record<string, string>, file: FileInfo | undefined): ValidSend {
  // Size first, whatever the type: it is the one check a server makes before reading the fields.
  if (file && file.size > MAX_FILE_BYTES) throw rejection('E504', 'file size exceeds 64 MB');

  const from = fields.from?.trim();
  if (!from) throw invalid('from is required');
  if (!NUMBER.test(from)) throw invalid('from must be digits with an optional leading +');

  if (isBlank(fields.body)) throw invalid('body is required');
  let body: unknown;
  try {
    body = JSON.parse(fields.body);
  } catch {
    throw invalid('body is not valid JSON');
  }
  if (!isObject(body)) throw invalid('body must be a JSON object');

  // The parameter table writes `contact` for the contacts type.
  const type = body.type === 'contact' ? 'contacts' : body.type;
  if (typeof type !== 'string' || !TYPES.includes(type)) throw invalid(`body.type must be one of ${TYPES.join(', ')}`);

  const recipients = validateRecipients(body.to, type);

  if (body.callback !== undefined && (typeof body.callback !== 'string' || !isHttpUrl(body.callback))) {
    throw invalid('body.callback must be an http(s) URL');
  }

  CONTENT_CHECKS[type](body, file);
  return { from, type, body, recipients, callback: body.callback as string | undefined };
}

function validateRecipients(to: unknown, type: string): string[] {
  if (isBlank(to) || (Array.isArray(to) && to.length === 0)) throw invalid('body.to is required');
  if ((type === 'contacts' || type === 'location') && !Array.isArray(to)) throw invalid(`body.to must be an array for ${type}`);
  const list = Array.isArray(to) ? to : [to];
  return list.map((n) => {
    // `to` has been seen as a bare JSON number as well as a string (docs/service.md §2.2).
    const number = typeof n === 'number' && Number.isSafeInteger(n) ? String(n) : n;
    if (typeof number !== 'string' || !NUMBER.test(number)) throw invalid(`body.to: ${JSON.stringify(n)} is not a number with country code`);
    return number;
  });
}

const CONTENT_CHECKS: Record<string, (body: Obj, file: FileInfo | undefined) => void> = {
  text(body) {
    const text = body.text;
    const message = isObject(text) ? text.message : undefined;
    if (isBlank(message)) throw rejection('E601', 'Missing message');
    if (typeof message !== 'string') throw invalid('body.text.message must be a string');
    if ([...message].length > MAX_TEXT_CHARS) throw invalid(`body.text.message exceeds ${MAX_TEXT_CHARS} characters`);
    if (body.preview_url !== undefined && typeof body.preview_url !== 'boolean') throw invalid('body.preview_url must be true or false');
  },
  image: (body, file) => checkMedia('image', body, file),
  document: (body, file) => checkMedia('document', body, file),
  audio: (body, file) => checkMedia('audio', body, file),
  template(body) {
    const t = body.template;
    if (!isObject(t) || typeof t.template_name !== 'string' || t.template_name.trim() === '') {
      throw rejection('E603', 'missing template name');
    }
    if (t.namespace !== undefined && typeof t.namespace !== 'string') throw invalid('body.template.namespace must be a string');
    if (t.policy !== undefined && t.policy !== 'deterministic' && t.policy !== 'fallback') {
      throw invalid('body.template.policy must be deterministic or fallback');
    }
    if (t.lang_code !== undefined && (typeof t.lang_code !== 'string' || !/^[a-z]{2,3}(_[A-Z]{2})?$/.test(t.lang_code))) {
      throw invalid('body.template.lang_code must be a language code such as en or en_US');
    }
    if (t.params !== undefined && (!Array.isArray(t.params) || !t.params.every((p) => typeof p === 'string'))) {
      throw invalid('body.template.params must be an array of strings');
    }
    if (t.ttl !== undefined) {
      const ttl = typeof t.ttl === 'string' && /^\d+$/.test(t.ttl) ? Number(t.ttl) : t.ttl;
      if (typeof ttl !== 'number' || !Number.isInteger(ttl) || ttl < 86_400 || ttl > 2_592_000) {
        throw invalid('body.template.ttl must be seconds from 86400 to 2592000');
      }
    }
  },
  contacts(body) {
    const contacts = body.contacts;
    if (!Array.isArray(contacts) || contacts.length === 0 || !contacts.every(isObject)) {
      throw invalid('body.contacts must be a non-empty array of contact objects');
    }
    contacts.forEach((c, i) => checkContact(c as Obj, `body.contacts[${i}]`));
  },
  location(body) {
    const loc = isObject(body.location) ? body.location : {};
    if (isBlank(loc.latitude)) throw rejection('E616', 'latitude missing');
    if (isBlank(loc.longitude)) throw rejection('E617', 'longitude missing');
    checkCoordinate(loc.latitude, 90, 'body.location.latitude');
    checkCoordinate(loc.longitude, 180, 'body.location.longitude');
  },
};

function checkMedia(type: string, body: Obj, file: FileInfo | undefined): void {
  if (!file) throw invalid(`file is required for type ${type}`);
  const ext = /\.([^.]+)$/.exec(file.filename)?.[1]?.toLowerCase();
  const allowed = MEDIA_EXTENSIONS[type];
  if (!ext || !allowed.includes(ext)) throw invalid(`file must be one of ${allowed.join(', ')} for type ${type}`);
  const media = body[type];
  if (media !== undefined && !isObject(media)) throw invalid(`body.${type} must be an object`);
  if (media && media.caption !== undefined && typeof media.caption !== 'string') throw invalid(`body.${type}.caption must be a string`);
}

function checkCoordinate(value: unknown, bound: number, field: string): void {
  const n = typeof value === 'string' ? Number(value.trim()) : value;
  if (typeof n !== 'number' || !Number.isFinite(n) || Math.abs(n) > bound) throw invalid(`${field} must be a decimal from -${bound} to ${bound}`);
}

const EMAIL = /^[^\s@]+@[^\s@]+\.[^\s@]+$/;
const PHONE_TYPES = ['CELL', 'MAIN', 'IPHONE', 'HOME', 'WORK'];

/** Checks only the formats documented for contacts (docs/service.md §2.3); which fields are required is not. */
function checkContact(c: Obj, at: string): void {
  if (c.birthday !== undefined && (typeof c.birthday !== 'string' || !/^\d{4}-\d{2}-\d{2}$/.test(c.birthday))) {
    throw invalid(`${at}.birthday must be YYYY-MM-DD`);
  }
  for (const [key, check] of [
    ['emails', (e: Obj, where: string) => {
      if (e.email !== undefined && (typeof e.email !== 'string' || !EMAIL.test(e.email))) throw invalid(`${where}.email is not an e-mail address`);
      if (e.type !== undefined && e.type !== 'HOME' && e.type !== 'WORK') throw invalid(`${where}.type must be HOME or WORK`);
    }],
    ['phones', (p: Obj, where: string) => {
      if (p.type !== undefined && !PHONE_TYPES.includes(p.type as string)) throw invalid(`${where}.type must be one of ${PHONE_TYPES.join(', ')}`);
      if (p.wa_id !== undefined && !/^\d+$/.test(String(p.wa_id))) throw invalid(`${where}.wa_id must be digits`);
    }],
    ['addresses', (a: Obj, where: string) => {
      if (a.country_code !== undefined && (typeof a.country_code !== 'string' || !/^[A-Za-z]{2}$/.test(a.country_code))) {
        throw invalid(`${where}.country_code must be a two-letter code`);
      }
    }],
  ] as const) {
    const list = c[key];
    if (list === undefined) continue;
    if (!Array.isArray(list) || !list.every(isObject)) throw invalid(`${at}.${key} must be an array of objects`);
    list.forEach((item, i) => check(item as Obj, `${at}.${key}[${i}]`));
  }
}

/** The submission answer with the fields seen in client code (docs/service.md §2.5): one entry per recipient. */
export function submittedReply(recipients: { id: string; mobile: string }[]): Reply {
  const data = recipients.map(({ id, mobile }) => ({ id, customid: '', customid1: '', customid2: '', mobile, status: 'AWAITED-DLR' }));
  return { status: 'OK', message: 'Message Sent Successfully', code: '200', data, xmlData: { entry: data } };
}

export function newMessageId(): string {
  return alnumId(20);
}

const DELIVERY_STEPS = ['SENT', 'DELIVERED', 'READ'] as const;

/**
 * GET the callback (docs/service.md §6.1) with status, mobile and timestamp, SENT then DELIVERED then READ.
 * Each step waits for the previous callback to finish, so a receiver sees them in order.
 */
export function reportDelivery(
  sender: CallbackSender,
  callback: string,
  mobile: string,
  delaysMs: readonly [number, number, number],
  onlySent: boolean,
): void {
  const steps = onlySent ? 1 : DELIVERY_STEPS.length;
  const step = (i: number): void =>
    sender.after(delaysMs[i], () => {
      const url = appendQuery(callback, { status: DELIVERY_STEPS[i], mobile, timestamp: String(nowSeconds()) });
      void sender.get('delivery', url).then(() => {
        if (i + 1 < steps) step(i + 1);
      });
    });
  step(0);
}
