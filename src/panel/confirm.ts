/**
 * Destructive actions ask first (CONTRACT §12): a page of their own says what the action breaks, and
 * only the form of that page, which carries `confirmar=sim`, acts. A post without it (an old page, a
 * form copied elsewhere) is sent to that page and changes nothing.
 */
import type { FastifyReply } from 'fastify';
import type { Current } from './session.ts';
import { field, page } from './session.ts';

export interface Confirmation {
  /** The question, as the page's title: "Revogar esta chave?". */
  title: string;
  /** The nav entry the page belongs to. */
  page: string;
  /** What is about to be changed. */
  facts: { term: string; value: string }[];
  /** What it breaks, in words. */
  warnings: string[];
  action: string;
  button: string;
  cancel: { href: string; text: string };
  hidden?: { name: string; value: string }[];
}

export const confirmed = (body: unknown): boolean => field(body, 'confirmar') === 'sim';

export function confirmationPage(reply: FastifyReply, current: Current, c: Confirmation) {
  return page(reply, 200, 'confirmar.eta', { ...c, hidden: c.hidden ?? [], session: current.session });
}

/** The answer to a post that skipped the confirmation page: that page. */
export const toConfirmation = (reply: FastifyReply, path: string) => reply.redirect(path, 303);
