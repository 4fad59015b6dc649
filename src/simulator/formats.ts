import { XMLBuilder } from 'fast-xml-parser';
import { phpSerialize } from './php-serialize';
import type { Reply } from './reply';

/** Response formats (docs/service.md §1.3); which ones an interface offers is set in server.ts. */
export type Format = 'json' | 'jsonp' | 'xml' | 'php' | 'text';

export interface Rendered {
  contentType: string;
  body: string;
}

/** `format` is matched case-insensitively; an absent or unsupported value gets the interface's default. */
export function resolveFormat(param: string | undefined, allowed: readonly Format[], fallback: Format): Format {
  const wanted = (param ?? '').trim().toLowerCase();
  return (allowed as readonly string[]).includes(wanted) ? (wanted as Format) : fallback;
}

export function render(reply: Reply, format: Format, jsonpCallback?: string): Rendered {
  const envelope = envelopeOf(reply, reply.data);
  switch (format) {
    case 'json':
      return { contentType: 'application/json; charset=utf-8', body: JSON.stringify(envelope) };
    case 'jsonp':
      return { contentType: 'application/javascript; charset=utf-8', body: `${jsonpName(jsonpCallback)}(${JSON.stringify(envelope)})` };
    case 'xml':
      return { contentType: 'application/xml; charset=utf-8', body: toXml(envelopeOf(reply, reply.xmlData ?? reply.data)) };
    case 'php':
      return { contentType: 'text/plain; charset=utf-8', body: phpSerialize(envelope) };
    case 'text':
      return { contentType: 'text/plain; charset=utf-8', body: toText(envelope) };
  }
}

/** Key order status, message, code, data, as the service writes it. */
function envelopeOf(reply: Reply, data: unknown): Record<string, unknown> {
  const out: Record<string, unknown> = { status: reply.status, message: reply.message };
  if (reply.code !== undefined) out.code = reply.code;
  if (data !== undefined) out.data = data;
  return out;
}

/** Only a plain JS identifier path may become the function name, so the response cannot carry script. */
function jsonpName(name: string | undefined): string {
  return name && /^[A-Za-z_$][\w$]*(\.[A-Za-z_$][\w$]*)*$/.test(name) ? name : 'callback';
}

const xmlBuilder = new XMLBuilder({ format: false, suppressEmptyNode: false });

function toXml(envelope: Record<string, unknown>): string {
  return '<?xml version="1.0" encoding="UTF-8"?>' + xmlBuilder.build({ api: xmlSafe(envelope) });
}

/** Characters XML 1.0 cannot carry at all are dropped (the builder escapes the rest). */
function xmlSafe(value: unknown): unknown {
  if (typeof value === 'string') return value.replace(/[\u0000-\u0008\u000B\u000C\u000E-\u001F\uFFFE\uFFFF]/g, '');
  if (Array.isArray(value)) return value.map(xmlSafe);
  if (value && typeof value === 'object') {
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, xmlSafe(v)]));
  }
  return value;
}

/** The voice APIs' text format: `key: value` lines, nested keys dotted, newlines in values turned to spaces. */
function toText(envelope: Record<string, unknown>): string {
  const lines: string[] = [];
  const walk = (prefix: string, value: unknown): void => {
    if (value !== null && typeof value === 'object' && Object.keys(value).length > 0) {
      for (const [k, v] of Object.entries(value)) walk(prefix ? `${prefix}.${k}` : k, v);
      return;
    }
    const text = value === null || value === undefined || typeof value === 'object' ? '' : String(value);
    lines.push(`${prefix}: ${text.replace(/\r\n|\r|\n/g, ' ')}`);
  };
  walk('', envelope);
  return lines.join('\n');
}
