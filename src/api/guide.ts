// The getting-started guide at the top of the reference page (the document's info.description), in Markdown. Its
// sh, js and python code blocks are run against a live server by test/api/samples.test.ts.
import { DEFAULT_ROWS, MAX_ROWS } from "../search/limits.ts";

/** The key the samples show; the samples test puts a real one in its place. */
export const SAMPLE_KEY = "YOUR_API_KEY";

/**
 * Where a partner gets a key: the developer portal at `portalUrl`, linked; with none configured, the API's operator
 * (`npm run keys`).
 */
function whereKeysComeFrom(portalUrl: string | undefined): string {
  if (portalUrl)
    return `Get your key at the [developer portal](${portalUrl}/) (${portalUrl}): [sign up](${portalUrl}/sign-up), confirm
your email address, and create a key; it is shown once, with requests ready to copy. The portal also rotates a key
(the old one keeps working for a grace period you choose), revokes it, and shows its usage.`;
  return `Keys are issued by the API's operator (on the server: \`npm run keys -- create <your name>\`, which prints the key
once); ask them for one. A key can be rotated (the old one keeps working for a grace period) or revoked.`;
}

/** The guide, with every sample pointing at `baseUrl` (no trailing slash) and keys from `portalUrl` (if any). */
export function renderGuide(baseUrl: string, maxAge: string, portalUrl?: string): string {
  const sample: Sample = { baseUrl, key: SAMPLE_KEY, maxAge, portalUrl };
  return [
    keySection(sample),
    firstRequest(sample),
    searchAndLinks(sample),
    errorsAndLimits(sample),
    browsersAndEvents(sample),
    versioning(sample),
  ].join("");
}

/** What the samples of each section are made with. */
interface Sample {
  baseUrl: string;
  key: string;
  maxAge: string;
  portalUrl: string | undefined;
}

/** What the API is, and the key: where it comes from and the three ways to send it. */
function keySection({ baseUrl, key, portalUrl }: Sample): string {
  return `A read-only API of a flash-sale retailer's sales and products: what is on sale now, what comes next, every
product on sale with its SKUs and prices, and a product search. Everything is under \`${baseUrl}/v1/\`, GET (and
HEAD) only, JSON in UTF-8.

# Getting started

## Your API key

Every request carries your key: 32 letters and digits. ${whereKeysComeFrom(portalUrl)}

Send the key in one of three ways (one is enough; two different keys in one request are a 400):

| how | example |
|---|---|
| the \`X-Api-Key\` header | \`X-Api-Key: ${key}\` |
| the \`Authorization\` header | \`Authorization: Bearer ${key}\` |
| the \`apikey\` query parameter | \`?apikey=${key}\` |

A header keeps the key out of URLs, and so out of proxy logs, browser history and \`Referer\` headers: prefer it.
The query parameter is for what cannot set a header, such as \`EventSource\` and a JSONP script.

A request without a key is a 401 \`api_key_missing\`; a wrong, revoked or expired key is a 401 \`api_key_invalid\`;
a key of an account the operator has suspended is a 401 \`api_key_suspended\` (it works again once the account is
reinstated).
`;
}

/** The first request, in curl, JavaScript and Python. */
function firstRequest({ baseUrl, key }: Sample): string {
  return `
## The first request

The active sales of every store, newest first:

\`\`\`sh
curl -sf -H "X-Api-Key: ${key}" "${baseUrl}/v1/sales/active.json"
\`\`\`

Each sale has its detail resource (\`sale\`), its page on the retailer's site (\`sale_url\`), and while it is
active the API links and IDs of its products (\`products\`, \`product_ids\`). \`/v1/sales/upcoming.json\` lists the
sales to come, soonest first; \`/v1/sales/<store>/active.json\` narrows to one store (\`women\`, \`men\`, \`kids\`,
\`home\`). A sale changes state at its \`begins\` and \`ends\` instants, to the second, and the resources with it.

In JavaScript (Node 18 or later, or a browser), with the key as a bearer token:

\`\`\`js
const base = "${baseUrl}/v1";
const key = "${key}";
const res = await fetch(\`\${base}/sales/active.json\`, { headers: { Authorization: \`Bearer \${key}\` } });
if (!res.ok) throw new Error(\`\${res.status}: \${(await res.json()).detail}\`);
const { sales } = await res.json();
for (const sale of sales) console.log(sale.begins, sale.store, sale.name);
\`\`\`

In Python, with the standard library only:

\`\`\`python
import json
import urllib.parse
import urllib.request

BASE = "${baseUrl}/v1"
KEY = "${key}"

query = urllib.parse.urlencode({"q": "boots", "rows": 5})
request = urllib.request.Request(f"{BASE}/products?{query}", headers={"X-Api-Key": KEY})
with urllib.request.urlopen(request) as res:
    page = json.load(res)
print(page["total_found"], "found")
for product in page["products"]:
    print(product["id"], product["name"], product["skus"][0]["sale_price"])
\`\`\`
`;
}

/** Search with its filters and paging, and affiliate links. */
function searchAndLinks({ baseUrl, key }: Sample): string {
  return `
## Search, its filters and paging

\`/v1/products?q=...\` finds products on sale now by the words of their name and description; every word must
match. Filters narrow it: \`store\`, \`brand\`, \`color\`, \`gender\`, \`size\`. Each may be repeated to widen it
(\`color=black&color=grey\` is either); different filters narrow it together. A page holds \`rows\` products
(default ${DEFAULT_ROWS}, at most ${MAX_ROWS}) starting at \`start\` (default 0); \`total_found\` counts every match, so
the next page starts at \`start + rows\` while that is below \`total_found\`:

\`\`\`sh
curl -sf -H "X-Api-Key: ${key}" "${baseUrl}/v1/products?q=boots&color=black&color=brown&rows=20&start=20"
\`\`\`

Sizes are given by size key (\`size=WoSh:8.5\`); \`/v1/products/sizes.json\` lists the keys of the sizes on sale
now, \`/v1/products/categories.json\` the categories. Unknown parameters are ignored; a bad value is a 400 naming
the parameter.

## Affiliate links

Add \`affid=<your affiliate ID>\` (1-64 of \`A-Z a-z 0-9 _ . -\`) to any request and every page link in the
response (\`sale_url\`, product \`url\`) carries \`&affid=<your ID>\`, so the retailer credits the visits you send.
Links into the API (\`sale\`, \`product\`, \`products\`) are never changed.
`;
}

/** Errors, caching and rate limits. */
function errorsAndLimits({ baseUrl, key, maxAge, portalUrl }: Sample): string {
  return `
## Errors

Every error is an RFC 9457 problem (\`application/problem+json\`) with a stable \`code\`:

| status | code | when |
|---|---|---|
| 400 | \`invalid_parameter\` | a parameter's value is not allowed (\`detail\` names it) |
| 400 | \`invalid_request\` | a malformed request target or query |
| 401 | \`api_key_missing\`, \`api_key_invalid\` | no key; a wrong, revoked or expired key (or too many wrong ones from your address) |
| 401 | \`api_key_suspended\` | your account is suspended by the API's operator: its keys work again once it is reinstated |
| 404 | \`not_found\` | no such resource, a sale that has ended, a product not on sale now |
| 405 | \`method_not_allowed\` | anything but GET or HEAD (\`Allow\` says so) |
| 408 | \`request_timeout\` | the request was not sent in time |
| 414 | \`uri_too_long\` | the request target is longer than 4096 bytes |
| 429 | \`rate_limited\` | the key's rate is used up: retry after \`Retry-After\` seconds |
| 431 | \`headers_too_large\` | the request's headers are too large |
| 500 | \`internal_error\` | a fault of ours |
| 503 | \`service_unavailable\` | no data is loaded yet: retry after \`Retry-After\` seconds |

Branch on \`code\`, not on \`title\` or \`detail\`, which are for people.

## Caching

Every 200 has an \`ETag\`: send it back in \`If-None-Match\` and an unchanged resource is a 304 without a body.
\`Cache-Control: public, max-age=N\` says how long a response may be reused: at most ${maxAge} seconds, and never past
the instant it changes (a sale in it begins or ends), so a cached response is never out of date.

\`\`\`sh
url="${baseUrl}/v1/products/categories.json"
etag=$(curl -sfI -H "X-Api-Key: ${key}" "$url" | tr -d '\\r' | sed -n 's/^[Ee][Tt][Aa][Gg]: //p')
curl -s -o /dev/null -w '%{http_code}\\n' -H "X-Api-Key: ${key}" -H "If-None-Match: $etag" "$url"
\`\`\`

Send \`Accept-Encoding: br\` or \`gzip\` (browsers and most clients do) for compressed bodies.

## Rate limits

Each key has a rate (requests a second) and a burst. Every response to a valid key says where it stands:
\`RateLimit-Limit\` (the burst), \`RateLimit-Remaining\` (requests left now) and \`RateLimit-Reset\` (seconds until
the bucket is full again). Past it, a 429 \`rate_limited\` with \`Retry-After\` (seconds). Poll with \`If-None-Match\`
and within \`max-age\` and you will rarely come near it.

\`${baseUrl}/v1/usage.json\` answers your key's limits, what is left of its burst, and its requests
today and in the last hour by status (2xx, 304, 4xx, 429, 5xx), free of the rate limit; the ${portalUrl ? `[developer portal](${portalUrl}/usage)` : "developer portal"} shows
the same per hour and per day, with a CSV download. Counts reach them within seconds of your requests.
`;
}

/** Browser apps (CORS, JSONP), the event stream and the calendar feeds. */
function browsersAndEvents({ baseUrl, key }: Sample): string {
  return `
## Browser apps: CORS and JSONP

Every response has \`Access-Control-Allow-Origin: *\`, so a page on any origin can call the API with \`fetch\`, the
key in a header (the preflight allows \`X-Api-Key\` and \`Authorization\`) or in the query.
For old browsers, add \`callback=<function name>\` and load the URL with a script element: the body is
\`/**/<name>(<json>);\`. Errors are then a call to the same function with the problem object; add
\`suppress_response_codes=1\` to get them with status 200, since a browser does not run a script whose response is a 4xx.

## Sale events as they happen

Instead of polling the lists, keep \`${baseUrl}/v1/events?apikey=${key}\` open: a Server-Sent Events stream
that sends \`sale.begins\` and \`sale.ends\` at the second they happen, and \`sale.announced\` and \`sale.updated\`
when a new snapshot adds or changes a sale. Narrow it with \`store\` and \`types\` (both repeatable); \`affid\`
goes into each sale's page link. In a browser, \`EventSource\` reads it, across origins, and reconnects by itself
with \`Last-Event-ID\`, so no event is missed or repeated; it cannot set a header, so the key goes in the query. In
a page's script:

\`\`\`javascript
const events = new EventSource("${baseUrl}/v1/events?apikey=${key}&store=women");
events.addEventListener("sale.begins", (e) => {
  const { sale, at } = JSON.parse(e.data);
  console.log(at, "now on:", sale.name, sale.sale_url);
});
events.addEventListener("sale.ends", (e) => console.log("ended:", JSON.parse(e.data).sale.name));
\`\`\`

From a shell, \`curl -N "${baseUrl}/v1/events?apikey=${key}"\` prints the stream as it comes.

For people rather than programs, every store's active and upcoming sales are also an iCalendar feed to subscribe to
(\`/v1/sales/upcoming.ics\`, or \`/v1/sales/<store>/upcoming.ics\` for one store):

\`\`\`sh
curl -sf "${baseUrl}/v1/sales/upcoming.ics?apikey=${key}" | grep -c BEGIN:VEVENT
\`\`\`
`;
}

/** What /v1/ promises, and where the OpenAPI document is. */
function versioning({ baseUrl }: Sample): string {
  return `
## Versioning

\`/v1/\` keeps its promises: fields and parameters may be added, never removed or changed in meaning or type. Ignore
fields you do not know. A change that breaks that promise would come as \`/v2/\`, alongside \`/v1/\`.

This document is also served as OpenAPI 3.1 at \`${baseUrl}/v1/openapi.json\` (no key needed).
`;
}
