// Iteration over the paged lists (CONTRACT §3): `{ data, nextCursor }`, the next page asked with
// `cursor=nextCursor`. A page is fetched only when the previous one has been consumed; the walk is
// bounded in pages, and a cursor that repeats is an error rather than a loop.
import type { CallOptions } from './http.ts';

export interface Page<I> {
  data: I[];
  nextCursor: string | null;
}

export interface PageOptions extends CallOptions {
  /** Stop after this many items (the last page fetched may hold more; they are not yielded). Default: no limit. */
  maxItems?: number;
  /**
   * Most pages fetched: when the list goes on beyond them the iterator throws PaginationLimitError
   * rather than end quietly short. Default 1 000 (100 000 items at `limit=100`).
   */
  maxPages?: number;
}

export const DEFAULT_MAX_PAGES = 1_000;

/** The list went on beyond `maxPages`, or the gateway answered a cursor already followed. */
export class PaginationLimitError extends Error {
  override readonly name = 'PaginationLimitError';
}

export async function* paginate<I>(
  fetchPage: (cursor: string | undefined, options: CallOptions) => Promise<Page<I>>,
  options: PageOptions = {},
): AsyncGenerator<I> {
  const { maxItems = Number.POSITIVE_INFINITY, maxPages = DEFAULT_MAX_PAGES, ...call } = options;
  if (!(maxPages >= 1) || !Number.isInteger(maxPages)) throw new RangeError(`maxPages must be a positive integer, got ${maxPages}`);
  if (!(maxItems >= 0)) throw new RangeError(`maxItems must be ≥ 0, got ${maxItems}`);
  const seen = new Set<string>();
  let cursor: string | undefined;
  let yielded = 0;
  for (let pages = 0; yielded < maxItems; ) {
    if (pages === maxPages) throw new PaginationLimitError(`the list goes on beyond maxPages (${maxPages}); raise it or narrow the query`);
    const page = await fetchPage(cursor, call);
    pages++;
    for (const item of page.data) {
      if (yielded >= maxItems) return;
      yielded++;
      yield item;
    }
    if (page.nextCursor === null) return;
    if (seen.has(page.nextCursor)) throw new PaginationLimitError(`the gateway answered cursor ${page.nextCursor} twice`);
    seen.add(page.nextCursor);
    cursor = page.nextCursor;
  }
}
