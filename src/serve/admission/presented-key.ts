// The API key a request presents: the `apikey` query parameter (the original place), an `X-Api-Key` header, or
// `Authorization: Bearer <key>` (RFC 6750). The same key may be given in several of them; two different keys are a
// 400, a key given twice in one place a 401, and no key at all the 401 that names the three ways.
import { ApiError } from "../../errors.ts";

const KEY_MISSING = new ApiError(
  401,
  "api_key_missing",
  "this request needs an API key: the apikey query parameter, an X-Api-Key header or Authorization: Bearer <key>",
);
const QUERY_TWICE = new ApiError(401, "api_key_invalid", "apikey must be given exactly once");
// node joins repeated X-Api-Key lines with ", " (and keeps only the first Authorization line).
const HEADER_TWICE = new ApiError(401, "api_key_invalid", "X-Api-Key must be given exactly once");
const NOT_BEARER = new ApiError(
  401,
  "api_key_missing",
  "the Authorization header carries no API key: send Authorization: Bearer <key> (or X-Api-Key, or apikey)",
);
const TWO_KEYS = new ApiError(
  400,
  "invalid_request",
  "the request carries two different API keys (apikey, X-Api-Key, Authorization): send one",
);

// RFC 6750 section 2.1: the scheme (any case), one or more spaces, the token (trailing spaces tolerated).
const BEARER = /^bearer +([^ ]+) *$/i;

/**
 * The key of a request's X-Api-Key and Authorization values: undefined when neither carries one, an ApiError when
 * they are malformed or disagree. An Authorization of another scheme (Basic, for a proxy) is not a key: it is
 * ignored beside a key given another way, and answered with its own 401 when it is the only one.
 */
export function headerKeyOf(
  xApiKey: string | undefined,
  authorization: string | undefined,
): string | ApiError | undefined {
  let key: string | undefined;
  if (xApiKey !== undefined && xApiKey !== "") {
    if (xApiKey.includes(",")) return HEADER_TWICE;
    key = xApiKey.trim();
  }
  if (authorization !== undefined && authorization !== "") {
    const bearer = BEARER.exec(authorization)?.[1];
    if (bearer === undefined) return key ?? NOT_BEARER;
    if (key !== undefined && key !== bearer) return TWO_KEYS;
    key = bearer;
  }
  return key;
}

/**
 * The one key a request presents, from its query's `apikey` values and its headers' key (headerKeyOf), or the
 * error that answers it: KEY_MISSING when there is none.
 */
export function presentedKey(
  apikey: readonly string[] | undefined,
  headerKey: string | ApiError | undefined,
): string | ApiError {
  if (apikey !== undefined && apikey.length > 1) return QUERY_TWICE;
  const fromQuery = apikey?.[0] || undefined;
  if (headerKey === undefined) return fromQuery ?? KEY_MISSING;
  if (headerKey === NOT_BEARER) return fromQuery ?? NOT_BEARER;
  if (headerKey instanceof ApiError) return headerKey;
  if (fromQuery !== undefined && fromQuery !== headerKey) return TWO_KEYS;
  return headerKey;
}
