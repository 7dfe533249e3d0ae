import { type TSchema, Type } from 'typebox';
import { parsePathId } from './ids.ts';

export const page_limit_default = 20;
export const page_limit_max = 100;
// 1 to page_limit_max (100), as a query string carries it.
const page_limit_pattern = '^(100|[1-9][0-9]?)$';

/** The query fields of every paged list (CONTRACT §3): newest first, `cursor` = the previous page's nextCursor. */
export const PageQuery = {
  limit: Type.Optional(
    Type.String({ pattern: page_limit_pattern, description: `an integer from 1 to ${page_limit_max} (default ${page_limit_default})` }),
  ),
  cursor: Type.Optional(Type.String({ pattern: '^[1-9][0-9]{0,15}$', description: 'the nextCursor of the previous page' })),
};

export const pageOf = <T extends TSchema>(item: T, title: string) =>
  Type.Object(
    {
      data: Type.Array(item),
      nextCursor: Type.Union([Type.String(), Type.Null()], { description: 'the `cursor` of the next page; null on the last one' }),
    },
    { title },
  );

/** How many rows to read (one more than the page, to know whether another follows) and below which id. */
export function pageRequest(query: { limit?: string; cursor?: string }): { limit: number; fetch: number; beforeId: number | null } {
  const limit = query.limit === undefined ? page_limit_default : Number(query.limit);
  return { limit, fetch: limit + 1, beforeId: query.cursor ? parsePathId(query.cursor, 'cursor') : null };
}

/** The page of `rows` (read with pageRequest's `fetch`) and the cursor of the next one, if any. */
export function pageAnswer<R extends { id: number }, V>(
  rows: R[],
  limit: number,
  view: (page: R[]) => V[],
): { data: V[]; nextCursor: string | null } {
  const page = rows.slice(0, limit);
  return { data: view(page), nextCursor: rows.length > limit ? String(page[page.length - 1]!.id) : null };
}
