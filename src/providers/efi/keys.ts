/**
 * The ids this installation gives Efí (a payout's idEnvio, a charge's custom_id): the installation's
 * id then ours, so that no two installations sharing an Efí account ever send the same one.
 */
const installation_id_length = 12;

export const efiKey = (installationId: string, id: number) => `${installationId}${id}`;

/** Our id in a key of this installation; null for anyone else's. */
export function idOfEfiKey(installationId: string, key: string | null): number | null {
  if (key === null || key.length <= installation_id_length || !key.startsWith(installationId)) return null;
  const rest = key.slice(installation_id_length);
  return /^[1-9]\d{0,14}$/.test(rest) ? Number(rest) : null;
}
