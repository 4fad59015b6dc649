/**
 * Building the URLs the simulator calls back (docs/service.md §6): appended query (§6.1), {variables} (§6.2,
 * §6.3).
 */

/** Appends parameters after the URL's own query, leaving what is there (a token, say) byte for byte. */
export function appendQuery(url: string, params: Record<string, string>): string {
  const hashAt = url.indexOf('#');
  const base = hashAt < 0 ? url : url.slice(0, hashAt);
  const fragment = hashAt < 0 ? '' : url.slice(hashAt);
  const query = Object.entries(params)
    .map(([k, v]) => `${encodeURIComponent(k)}=${encodeURIComponent(v)}`)
    .join('&');
  const separator = !base.includes('?') ? '?' : /[?&]$/.test(base) ? '' : '&';
  return base + separator + query + fragment;
}

/**
 * Replaces each `{name}` of `vars` in the URL by its URL-encoded value. A URL whose braces were
 * percent-encoded once too often (`%7Bname%7D`) is accepted as well. Unknown `{names}` are left alone.
 */
export function fillVariables(url: string, vars: Record<string, string>): { url: string; replaced: number } {
  let replaced = 0;
  const filled = url.replace(/\{(\w+)\}|%7B(\w+)%7D/gi, (match, plain?: string, encoded?: string) => {
    const name = plain ?? encoded!;
    if (!Object.prototype.hasOwnProperty.call(vars, name)) return match;
    replaced++;
    return encodeURIComponent(vars[name]);
  });
  return { url: filled, replaced };
}

export function isHttpUrl(value: string): boolean {
  try {
    const { protocol } = new URL(value);
    return protocol === 'http:' || protocol === 'https:';
  } catch {
    return false;
  }
}
