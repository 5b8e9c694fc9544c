// The portal's forms as zod schemas: what each accepts, and the message shown next to a field that is wrong.
import { z } from "zod";
import { weakPassword } from "./common-passwords.ts";

const text = (label: string, max: number) =>
  z
    .string(`${label} is required`)
    .trim()
    .min(1, `${label} is required`)
    .max(max, `${label} must be at most ${max} characters`)
    .refine((v) => !/[\u0000-\u001f\u007f]/.test(v), `${label} must not contain control characters`);
const email = z
  .string("Email is required")
  .trim()
  .max(254, "Email must be at most 254 characters")
  .pipe(z.email("Enter an email address such as name@example.com"));
/** Why a new password is refused although long enough (common-passwords.ts). */
const WEAK_PASSWORD = {
  common:
    "This password is one of the most common ones, found in leaked password lists that attackers try first: choose another (a few unrelated words make a good one)",
  pattern:
    "This password is a simple pattern (a short piece repeated, or a run such as abcd or 4321): choose another (a few unrelated words make a good one)",
} as const;

/**
 * NIST SP 800-63B: at least 8 characters, a long maximum, no composition rules, and none of the common, breached or
 * repetitive passwords; we ask for 12.
 */
const newPassword = z
  .string("Password is required")
  .min(12, "Password must be at least 12 characters")
  .max(256, "Password must be at most 256 characters")
  .superRefine((value, ctx) => {
    const weak = weakPassword(value);
    if (weak) ctx.addIssue({ code: "custom", message: WEAK_PASSWORD[weak] });
  });
const password = z.string("Password is required").min(1, "Password is required").max(256, "Password is too long");

export const SignUpSchema = z.object({ email, password: newPassword, partner: text("Partner name", 100) });

export const SignInSchema = z.object({ email: text("Email", 254), password });

export const ResetRequestSchema = z.object({ email });
export const ResetSchema = z.object({ token: z.string().max(100), password: newPassword });

/**
 * A key's label: letters (any script), digits, spaces and - _ . , ( ) / ', starting with a letter or digit. Nothing a
 * spreadsheet reads as a formula or a separator (= + @ ; tab), no markup, no invisible or direction-changing character.
 */
const KEY_LABEL = /^[\p{L}\p{N}][\p{L}\p{M}\p{N} _.,()/'-]*$/u;
export const KeyNameSchema = z.object({
  name: text("Name", 64).refine(
    (v) => KEY_LABEL.test(v),
    "Name may have letters, digits, spaces and - _ . , ( ) / ' only, and must start with a letter or digit",
  ),
});

/** The grace periods a partner may pick when rotating a key. */
export const GRACE_PERIODS = { now: 0, "1h": 3600_000, "24h": 86_400_000, "7d": 7 * 86_400_000 } as const;
export const RotateSchema = z.object({
  grace: z.enum(Object.keys(GRACE_PERIODS) as [keyof typeof GRACE_PERIODS], "Pick a grace period"),
});

/** The most a rate or burst may be set to: far above what one server answers, and still a plain number. */
const MAX_RATE = 1_000_000;
const rateField = z
  .string("Rate is required")
  .trim()
  .regex(/^(?:[0-9]{1,7}(?:\.[0-9]{1,3})?)$/, "Rate must be a number of requests a second, such as 50 or 0.5")
  .transform(Number)
  .refine((n) => n > 0 && n <= MAX_RATE, `Rate must be more than 0 and at most ${MAX_RATE}`);
const burstField = z
  .string()
  .trim()
  .default("")
  .refine(
    (v) => v === "" || /^[1-9][0-9]{0,6}$/.test(v),
    `Burst must be a whole number from 1 to ${MAX_RATE}, or empty`,
  )
  .transform((v) => (v === "" ? undefined : Number(v)))
  .refine((n) => n === undefined || n <= MAX_RATE, `Burst must be at most ${MAX_RATE}`);
/** An operator's limits: a rate and burst (the button "set"), or the API's defaults again (the button "default"). */
export const LimitsSchema = z.discriminatedUnion(
  "action",
  [
    z.object({ action: z.literal("set"), rate: rateField, burst: burstField }),
    z.object({ action: z.literal("default") }),
  ],
  "Choose a button",
);

export const PasswordChangeSchema = z.object({ current: password, password: newPassword });
export const EmailChangeSchema = z.object({ email, current: password });
export const DeleteAccountSchema = z.object({
  current: password,
  confirm: z.literal("delete", 'Type "delete" to confirm'),
});

/** A two-factor code as typed: six digits, or a recovery code (totp.ts tells them apart). */
export const CodeSchema = z.object({
  code: z.string("Code is required").trim().min(1, "Code is required").max(40, "Code is too long"),
});
/** Starting to set up two-factor sign-in: the current password. */
export const TwoFactorSetupSchema = z.object({ current: password });
const role = z.enum(["owner", "developer", "viewer"], "Pick a role");
/** An owner's invitation of a member, and a member's new role. */
export const InviteSchema = z.object({ email, role });
export const RoleSchema = z.object({ role });
/** An organisation's settings: its name; whether two-factor sign-in is required of every member (a box: on or absent). */
export const OrgNameSchema = z.object({ name: text("Name", 100) });
export const RequireTwoFactorSchema = z.object({ require: z.literal("on").optional() });
/** An invited person's new account: the invitation's token (which proves the address) and a password. */
export const InvitedSignUpSchema = z.object({ token: z.string().max(100), password: newPassword });

/** Field name -> first message, for the fields of a form that failed. */
export type FieldErrors = Partial<Record<string, string>>;

/** Parses a submitted form: the data, or the message for each field that is wrong. */
export function parseForm<S extends z.ZodType>(
  schema: S,
  body: Record<string, unknown>,
): { ok: true; data: z.infer<S> } | { ok: false; errors: FieldErrors } {
  const result = schema.safeParse(body);
  if (result.success) return { ok: true, data: result.data };
  const errors: FieldErrors = {};
  for (const issue of result.error.issues) {
    const key = String(issue.path[0] ?? "form");
    errors[key] ??= issue.message;
  }
  return { ok: false, errors };
}
