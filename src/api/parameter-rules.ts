// The formats of the query parameters that the contract states: checked by the server (src/serve/admission/request.ts,
// search-params.ts) and written into the OpenAPI document (parameters.ts) from this one place. How much a search may
// ask for (rows, start, filter values, query text) is in src/search/limits.ts.

/** `affid`: 1-64 characters of `A-Za-z0-9_.-`. */
export const AFFID_RE = /^[A-Za-z0-9_.-]{1,64}$/;
/** `callback`: a JavaScript name of at most 64 characters (dots allowed, as in `app.cb`). */
export const CALLBACK_RE = /^[A-Za-z_$][A-Za-z0-9_$.]{0,63}$/;
/** `min_price`/`max_price`: a non-negative decimal with at most two decimals and nine integer digits. */
export const PRICE_PARAM_RE = /^(0|[1-9][0-9]{0,8})(\.[0-9]{1,2})?$/;
