'use strict';
// The fields-only multipart body the transport writes itself (src/core/transport.ts fieldsForm): it must
// be, byte for byte, what form-data writes for the same appends, since form-data is what the service's
// multipart reading was seen to accept and what file sends still use.
const assert = require('node:assert/strict');
const FormData = require('form-data');
const { fieldsForm } = require('../dist/core/transport');
// A seeded generator, so a failing case can be replayed from its seed.
const { mulberry32: prng } = require('../dist/simulator/faults');

function viaFormData(boundary, params, apiKey) {
  const form = new FormData();
  form.setBoundary(boundary);
  for (const [k, v] of Object.entries(params)) if (v !== undefined) form.append(k, v);
  form.append('api_key', apiKey);
  return form.getBuffer();
}

// Characters that matter to a multipart body or its encoding: quotes, CR/LF, dashes, multi-byte ones.
const ALPHABET = ['a', 'Z', '0', ' ', '"', '\r', '\n', '-', '=', ';', '\\', '%', 'é', '€', '😀', '\u0000', '{', '}'];

function text(rnd, max) {
  let s = '';
  const n = Math.floor(rnd() * max);
  for (let i = 0; i < n; i++) s += ALPHABET[Math.floor(rnd() * ALPHABET.length)];
  return s;
}

describe('transport: fields-only multipart body', function () {
  it('is what form-data writes for a whatsapp send', function () {
    const params = { method: 'wa', from: '918000000000', body: JSON.stringify({ type: 'text', text: { message: 'héllo "you"\r\n' }, to: ['919812345678'] }), format: 'json' };
    const ours = fieldsForm('----kaleyraB', params, 'KEY');
    assert.equal(ours.toString('latin1'), viaFormData('----kaleyraB', params, 'KEY').toString('latin1'));
    assert.match(ours.toString(), /^------kaleyraB\r\nContent-Disposition: form-data; name="method"\r\n\r\nwa\r\n/);
    assert.match(ours.toString(), /name="api_key"\r\n\r\nKEY\r\n------kaleyraB--\r\n$/);
  });

  it('leaves out undefined fields and keeps empty ones, as form-data does', function () {
    const params = { method: 'wa', from: undefined, body: '' };
    const ours = fieldsForm('b', params, 'K');
    assert.deepEqual(ours, viaFormData('b', params, 'K'));
    assert.ok(!ours.toString().includes('name="from"'));
    assert.ok(ours.toString().includes('name="body"\r\n\r\n\r\n'));
  });

  it('matches form-data for 5,000 random forms (names with quotes and line breaks escaped alike)', function () {
    const rnd = prng(20261121);
    for (let c = 0; c < 5000; c++) {
      const params = {};
      const fields = Math.floor(rnd() * 6);
      for (let f = 0; f < fields; f++) params[text(rnd, 8) || `f${f}`] = rnd() < 0.1 ? undefined : text(rnd, 40);
      const boundary = `----kaleyra${c}`;
      const key = text(rnd, 12);
      assert.deepEqual(fieldsForm(boundary, params, key), viaFormData(boundary, params, key), `case ${c}: ${JSON.stringify(params)}`);
    }
  });
});
