/**
 * The ids the gateway gives the PSP (CONTRACT §11.2's rule for every key): each carries the
 * installation's id, so two gateways on one PSP account never take each other's charge or devolução.
 */
import { newTxid } from '../../domain/pix-brcode.ts';

const installation_id_length = 12;

/**
 * A charge's txid: the installation id and 20 [A-Za-z0-9] (the API Pix wants 26–35), the sale's
 * reference when it has one: a PUT of the same charge under the same txid answers the charge made.
 */
export const cobTxid = (installationId: string, reference: string | null) => `${installationId}${reference ?? newTxid(20)}`;

/** A static BR Code's txid: 25 characters, the field's limit (the installation id and 13 random). */
export const staticTxid = (installationId: string) => `${installationId}${newTxid(25 - installation_id_length)}`;

/** A refund's devolução id ([A-Za-z0-9]{1,35}). */
export const refundDevolucaoId = (installationId: string, refundId: number) => `${installationId}rf${refundId}`;

/** The devolução that returns a Pix whole (unique within its Pix, which is all the API Pix asks). */
export const returnDevolucaoId = (installationId: string, endToEndId: string) => `${installationId}rt${endToEndId.slice(-21)}`;

/** Our refund's id in a devolução id (before installation ids, `rf<id>`); null when it is not ours. */
export function refundIdOf(installationId: string, devolucaoId: string): number | null {
  const match = /^(?:([a-z0-9]{12}))?rf(\d{1,15})$/.exec(devolucaoId);
  if (!match || (match[1] !== undefined && match[1] !== installationId)) return null;
  return Number(match[2]);
}

/** Whether a devolução is our return of that Pix (before installation ids, `rt` + its last 30 characters). */
export const isOurReturn = (installationId: string, endToEndId: string, devolucaoId: string) =>
  devolucaoId === returnDevolucaoId(installationId, endToEndId) || devolucaoId === `rt${endToEndId.slice(-30)}`;
