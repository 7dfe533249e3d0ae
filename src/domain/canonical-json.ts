/** Deeper than any body this API accepts; bounds the recursion below. */
export const canonical_json_max_depth = 64;

export class TooDeepError extends Error {}

/** JSON with object keys sorted at every depth: two bodies that mean the same read the same. */
export function canonicalJson(value: unknown, depth = 0): string {
  if (depth > canonical_json_max_depth) throw new TooDeepError(`nested deeper than ${canonical_json_max_depth} levels`);
  if (Array.isArray(value)) return `[${value.map((v) => canonicalJson(v, depth + 1)).join(',')}]`;
  if (value !== null && typeof value === 'object') {
    const entries = Object.keys(value)
      .sort()
      .map((k) => `${JSON.stringify(k)}:${canonicalJson((value as Record<string, unknown>)[k], depth + 1)}`);
    return `{${entries.join(',')}}`;
  }
  return JSON.stringify(value) ?? 'null';
}
