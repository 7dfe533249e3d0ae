/**
 * The reference a keyed request's provider call is made with (CONTRACT §3, §11): drawn with the
 * key's claim and kept for a retry of the same body, so the provider is asked again for what the
 * first attempt made, never for a second.
 */

// How long after it is drawn a reference still serves a retry of the same body: well inside the
// shortest PIX charge's life (60 s), so the charge it finds is still payable.
export const reference_kept_ms = 30_000;

/** `kept`: an earlier attempt under the key drew it, and its call may have reached the provider. */
export interface ProviderReference {
  value: string;
  kept: boolean;
}
