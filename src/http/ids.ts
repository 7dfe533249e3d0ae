import { ApiError } from '../domain/errors.ts';

const path_id_pattern = /^[1-9][0-9]{0,15}$/;

/** A path id per CONTRACT §1: canonical positive integer up to 2^53 − 1, else 400. */
export function parsePathId(raw: string, what = 'id'): number {
  const n = Number(raw);
  if (!path_id_pattern.test(raw) || !Number.isSafeInteger(n)) {
    throw new ApiError('BAD_REQUEST', `${what} must be a positive integer`);
  }
  return n;
}
