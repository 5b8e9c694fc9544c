// The rules of the query parameters that the contract states: checked by the server (src/serve/admission/request.ts,
// search-params.ts) and written into the OpenAPI document (parameters.ts) from this one place.

/** `affid`: 1-64 characters of `A-Za-z0-9_.-`. */
export const AFFID_RE = /^[A-Za-z0-9_.-]{1,64}$/;
/** `callback`: a JavaScript name of at most 64 characters (dots allowed, as in `app.cb`). */
export const CALLBACK_RE = /^[A-Za-z_$][A-Za-z0-9_$.]{0,63}$/;
/** Largest `start` accepted: past the end is fine (an empty page), past 32-bit integers is a 400. */
export const MAX_START = 2_147_483_647;
/** Most values one repeated filter may have. */
export const MAX_FILTER_VALUES = 32;
/** `min_price`/`max_price`: a non-negative decimal with at most two decimals and nine integer digits. */
export const PRICE_PARAM_RE = /^(0|[1-9][0-9]{0,8})(\.[0-9]{1,2})?$/;
