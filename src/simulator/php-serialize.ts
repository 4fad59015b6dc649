/**
 * PHP serialize() of JSON-like values, as the service's `format=php` answers. Objects become associative
 * arrays; keys that are canonical integers become integer keys (PHP converts them the same way), so a
 * record keyed "0" serializes as `i:0;`. String lengths are UTF-8 byte counts.
 */
export function phpSerialize(value: unknown): string {
  if (value === null || value === undefined) return 'N;';
  switch (typeof value) {
    case 'boolean':
      return `b:${value ? 1 : 0};`;
    case 'number':
      if (Number.isInteger(value)) return `i:${value};`;
      return Number.isFinite(value) ? `d:${value};` : 'N;';
    case 'string':
      return `s:${Buffer.byteLength(value, 'utf8')}:"${value}";`;
    case 'object': {
      const entries = Array.isArray(value) ? value.map((v, i) => [String(i), v] as const) : Object.entries(value);
      const body = entries.map(([k, v]) => phpKey(k) + phpSerialize(v)).join('');
      return `a:${entries.length}:{${body}}`;
    }
    default:
      return 'N;';
  }
}

function phpKey(key: string): string {
  return /^(0|-?[1-9]\d{0,17})$/.test(key) ? `i:${key};` : phpSerialize(key);
}
