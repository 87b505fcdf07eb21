//! Password login as PVE 8/9 takes it: `POST /access/ticket` with the password alone;
//! a user with a second factor gets `NeedTFA` and a half ticket, answered in a second
//! `POST` with `tfa-challenge` and `api_otp` typed (`totp:<code>`) as the password.
//! `otp` is never sent: PVE 8+ reads it as a typed answer that uses the code up and
//! still asks for the second factor (pve-access-control `authenticate_2nd_new_do`).
//! Failures carry 1.6's messages, with what PVE's bare 401 cannot say told in the
//! user's terms.

use super::auth::{self, Login};
use super::{Answer, ApiError, ApiErrorKind, Client, Method};

/// Why a second factor was refused, as far as the client can tell (PVE answers every
/// refusal with the same 401).
pub(super) const SECOND_FACTOR_REFUSED: &str = "the second factor in api_otp was not accepted. A TOTP code logs in \
     once, within its 30-second step and one step either side: give a code not used before (PVE refuses a used \
     one as reused, and after 8 refused codes locks the user's TOTP until an admin unlocks it with \
     `pveum user tfa unlock <user>`)";

impl Client {
    /// Password login: a ticket and its CSRF token (the caller keeps them:
    /// [`super::ticket_reuse`]).
    pub(super) fn login(&self, user: &str, password: &str, otp: Option<&str>) -> Result<(String, String), ApiError> {
        let url = format!("{}/access/ticket", self.base_url);
        let refused = |why: &str| {
            ApiError::other(
                ApiErrorKind::Auth,
                format!("Couldn't authenticate user: {user} to {url}{why}"),
            )
        };
        let first = [("username", user.to_string()), ("password", password.to_string())];
        match (self.ask_ticket(user, &url, &first)?, otp) {
            (Login::Ticket { ticket, csrf }, None) => Ok((ticket, csrf)),
            (Login::Ticket { .. }, Some(_)) => Err(refused(&format!(
                ": api_otp is set, but {user} has no second factor (PVE refuses a code for such a user): remove \
                 api_otp, or set up TOTP for {user}"
            ))),
            (Login::NeedTfa { .. }, None) => Err(ApiError::other(
                ApiErrorKind::Auth,
                "Couldn't authenticate user: missing Two Factor Authentication (TFA)",
            )),
            (Login::NeedTfa { challenge }, Some(otp)) => {
                let second = [
                    ("username", user.to_string()),
                    ("tfa-challenge", challenge),
                    ("password", auth::tfa_response(otp)),
                ];
                match self.ask_ticket(user, &url, &second)? {
                    Login::Ticket { ticket, csrf } => Ok((ticket, csrf)),
                    _ => Err(refused(&format!(": {SECOND_FACTOR_REFUSED}"))),
                }
            }
            (Login::Rejected, _) => Err(refused("")),
        }
    }

    /// One `POST /access/ticket`: PVE's 401 (or 400) is [`Login::Rejected`].
    fn ask_ticket(&self, user: &str, url: &str, form: &[(&str, String)]) -> Result<Login, ApiError> {
        match self.send_value(Method::Post, "/access/ticket", form, Answer::Data) {
            Ok(data) => Ok(auth::parse_login(&data)),
            Err(e) if e.is_status(401) || e.is_status(400) => Ok(Login::Rejected),
            Err(e) if e.kind == ApiErrorKind::Http => Err(ApiError::other(
                ApiErrorKind::Auth,
                format!("Couldn't authenticate user: {user} to {url}: {e}"),
            )),
            Err(e) => Err(e),
        }
    }
}
