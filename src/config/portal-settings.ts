// The portal's settings (npm run portal, and npm start's portal): one zod schema over the environment, parsed once by
// the CLI with the same rules as the API's (rules.ts). TRUST_PROXY and HOST are read as the API reads them.
import { z } from "zod";
import { DEFAULT_HOST, DEFAULT_KEYS_PER_ACCOUNT, DEFAULT_MAIL_FROM, DEFAULT_PORTAL_PORT } from "./defaults.ts";
import { TrustProxySchema } from "./proxies.ts";
import { decimal, isSet, parseWith, Port } from "./rules.ts";
import { parseWebhooksAllow } from "./webhooks-allow.ts";

const PortalConfigSchema = z.object({
  /** Env PORTAL_PORT. Default 8081. */
  port: Port.default(DEFAULT_PORTAL_PORT),
  /** Env PORTAL_HOST. Default HOST, else 127.0.0.1. */
  host: z.string().min(1).default(DEFAULT_HOST),
  /**
   * The portal's public URL (PORTAL_URL), for links in mails, the accepted Origin of forms and the passkeys' relying
   * party (its host is their RP ID: a host name, https or localhost). Its scheme decides the cookies: https gives
   * `__Host-` cookies with Secure. Default http://HOST:PORT.
   */
  publicUrl: z.url({ protocol: /^https?$/ }).optional(),
  /** SMTP_URL: where mail goes (smtp:// or smtps://); unset: mails are written to the portal's log. */
  smtpUrl: z.url({ protocol: /^smtps?$/ }).optional(),
  /** MAIL_FROM. Default `Developer portal <portal@localhost>`. */
  mailFrom: z.string().min(3).default(DEFAULT_MAIL_FROM),
  /** PORTAL_KEY_LIMIT: live keys an account may have. Default 10. */
  keyLimit: decimal(z.number().int().min(1).max(1000)).default(DEFAULT_KEYS_PER_ACCOUNT),
  /** PORTAL_APPROVAL: `manual`, new accounts wait for an operator's approval; `auto` (the default), they do not. */
  approval: z.enum(["auto", "manual"], "PORTAL_APPROVAL must be auto or manual").default("auto"),
  /** TRUST_PROXY, as the API reads it: the proxies whose X-Forwarded-For names the client. Default none. */
  trustProxy: TrustProxySchema,
  /**
   * PORTAL_SECRET_KEY: 32 random bytes, base64 (`openssl rand -base64 32`), which seal the TOTP secrets of two-factor
   * sign-in in the database. Unset: two-factor sign-in cannot be set up. Keep it apart from the database's backups.
   */
  secretKey: z
    .string()
    .transform((v) => Buffer.from(v, "base64"))
    .refine((key) => key.length === 32, "PORTAL_SECRET_KEY must be 32 bytes, base64 (openssl rand -base64 32)")
    .optional(),
  /**
   * WEBHOOKS_API_KEY: an API key of the portal's own (`npm run keys`), with which it reads the API's event stream to
   * send webhooks. Unset: no events are read (endpoints can still be added, and sent test events).
   */
  webhooksApiKey: z
    .string()
    .regex(/^[A-Za-z0-9]{32}$/, "WEBHOOKS_API_KEY must be an API key (32 letters and digits)")
    .optional(),
  /**
   * WEBHOOKS_ALLOW: addresses and CIDR networks (or `loopback`) webhooks may be sent to though they are not public, by
   * plain http too (tests, private deployments). Default none: https to public addresses only.
   */
  webhooksAllow: z
    .string()
    .default("")
    .transform((v, ctx) => {
      const allowed = parseWebhooksAllow(v);
      if (typeof allowed !== "string") return allowed;
      ctx.addIssue({ code: "custom", message: allowed });
      return z.NEVER;
    }),
});
export type PortalConfig = z.infer<typeof PortalConfigSchema>;

/** Each portal setting's environment variable. */
const PORTAL_ENV_NAMES = {
  port: "PORTAL_PORT",
  host: "PORTAL_HOST",
  publicUrl: "PORTAL_URL",
  smtpUrl: "SMTP_URL",
  mailFrom: "MAIL_FROM",
  keyLimit: "PORTAL_KEY_LIMIT",
  approval: "PORTAL_APPROVAL",
  trustProxy: "TRUST_PROXY",
  secretKey: "PORTAL_SECRET_KEY",
  webhooksApiKey: "WEBHOOKS_API_KEY",
  webhooksAllow: "WEBHOOKS_ALLOW",
} as const satisfies Record<keyof z.input<typeof PortalConfigSchema>, string>;

/** Reads the portal's settings from `env` (PORTAL_PORT, PORTAL_HOST or HOST, PORTAL_URL, SMTP_URL, ...). */
export function parsePortalConfig(env: Record<string, string | undefined>): PortalConfig {
  const host = isSet(env.PORTAL_HOST) ? env.PORTAL_HOST : env.HOST;
  return parseWith(PortalConfigSchema, PORTAL_ENV_NAMES, env, { host });
}
