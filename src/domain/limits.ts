/** Longest notification target (webhook or postbackUrl) accepted, in characters. */
export const url_max_length = 2048;
