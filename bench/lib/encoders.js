'use strict';
// The two encoders bench/multipart.js compares with the package's own for the form of a text send (a
// POST of fields only; docs/adr/0006-multipart.md): undici's web-standard FormData, and form-data
// collected from its stream into one Buffer. The package writes that form directly
// (Transport#encodeFields in src/core/transport.ts) and has no other; the benchmark puts one of these in
// its place on an account's transport.
const { randomUUID } = require('node:crypto');
const FormData = require('form-data');
const { FormData: UndiciFormData } = require('undici');

/** undici's FormData: undici writes it and its content type. */
function undiciFields(req) {
  const form = new UndiciFormData();
  for (const [k, v] of Object.entries(req.params)) if (v !== undefined) form.append(k, v);
  form.append('api_key', req.apiKey);
  return { body: form, headers: undefined };
}

/**
 * form-data at its cheapest for a few fields: its stream collected into one Buffer (getBuffer() copies
 * the growing body again for every part). The boundary is drawn as the transport draws its own. Text
 * parts are written synchronously on resume(), so the Buffer is whole when resume() returns (checked).
 */
function formDataFields(req) {
  const form = new FormData();
  form.setBoundary(`----kaleyra${randomUUID()}`);
  for (const [k, v] of Object.entries(req.params)) if (v !== undefined) form.append(k, v);
  form.append('api_key', req.apiKey);
  const parts = [];
  let ended = false;
  let failed;
  form.on('data', (part) => parts.push(String(part)));
  form.on('error', (err) => (failed = err));
  form.on('end', () => (ended = true));
  form.resume();
  if (failed) throw failed;
  if (!ended) throw new Error('form-data did not write the fields at once');
  const body = Buffer.from(parts.join(''));
  return { body, headers: { 'content-type': `multipart/form-data; boundary=${form.getBoundary()}`, 'content-length': String(body.length) } };
}

const ENCODERS = { direct: undefined, undici: undiciFields, 'form-data': formDataFields };

/**
 * Makes `transport` (a KaleyraClient's) encode the fields-only forms with `name`: 'direct' leaves the
 * package's own, the others replace its encodeFields() on this transport alone.
 */
function useEncoder(transport, name) {
  if (!(name in ENCODERS)) throw new Error(`no encoder "${name}": ${Object.keys(ENCODERS).join(', ')}`);
  // A renamed method would leave every account on the direct encoder, comparing it with itself.
  if (typeof transport.encodeFields !== 'function') throw new Error('the transport has no encodeFields(): bench/lib/encoders.js must follow src/core/transport.ts');
  if (ENCODERS[name]) transport.encodeFields = ENCODERS[name];
}

module.exports = { useEncoder };
