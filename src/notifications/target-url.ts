import { url_max_length } from '../domain/limits.ts';
import { privateTargetReason } from './address-guard.ts';

/** http(s), no credentials, and (unless allowed) not a loopback or private target. */
export async function notificationUrlProblem(raw: string, allowPrivate: boolean): Promise<string | null> {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return 'must be an absolute http(s) URL';
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') return 'must be an http or https URL';
  if (url.username || url.password) return 'must not carry credentials';
  if (raw.length > url_max_length) return `must be at most ${url_max_length} characters`;
  if (allowPrivate) return null;
  const reason = await privateTargetReason(raw);
  return reason ? `is refused: ${reason}` : null;
}
