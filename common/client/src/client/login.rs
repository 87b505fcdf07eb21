//! Password login: `POST /access/ticket`, answering a TFA challenge with `api_otp`,
//! failing with 1.6's messages.

use super::auth::{self, Login};
use super::{Answer, ApiError, ApiErrorKind, Client, Method};

impl Client {
    /// Password login: a ticket and its CSRF token, answering a TFA challenge with
    /// `api_otp` when asked (the caller keeps them: [`super::reuse`]).
    pub(super) fn login(&self, user: &str, password: &str, otp: Option<&str>) -> Result<(String, String), ApiError> {
        let url = format!("{}/access/ticket", self.base_url);
        // With a code, a refusal may be its age: say so (PVE's answer does not tell).
        let stale = if otp.is_some() {
            ": the password or the code in api_otp was not accepted (a TOTP code is valid for its 30-second step and one step either side)"
        } else {
            ""
        };
        let rejected = || {
            ApiError::other(
                ApiErrorKind::Auth,
                format!("Couldn't authenticate user: {user} to {url}{stale}"),
            )
        };
        let ask = |form: &[(&str, String)]| match self.send_value(Method::Post, "/access/ticket", form, Answer::Data) {
            Ok(data) => Ok(auth::parse_login(&data)),
            Err(e) if e.is_status(401) || e.is_status(400) => Ok(Login::Rejected),
            Err(e) if e.kind == ApiErrorKind::Http => Err(ApiError::other(
                ApiErrorKind::Auth,
                format!("Couldn't authenticate user: {user} to {url}: {e}"),
            )),
            Err(e) => Err(e),
        };
        let mut form = vec![("username", user.to_string()), ("password", password.to_string())];
        if let Some(otp) = otp {
            form.push(("otp", otp.to_string()));
        }
        let answer = match ask(&form)? {
            Login::NeedTfa { challenge } => {
                let Some(otp) = otp else {
                    return Err(ApiError::other(
                        ApiErrorKind::Auth,
                        "Couldn't authenticate user: missing Two Factor Authentication (TFA)",
                    ));
                };
                let second = [
                    ("username", user.to_string()),
                    ("tfa-challenge", challenge),
                    ("password", auth::tfa_response(otp)),
                ];
                match ask(&second)? {
                    Login::Ticket { ticket, csrf } => Login::Ticket { ticket, csrf },
                    _ => {
                        return Err(ApiError::other(
                            ApiErrorKind::Auth,
                            format!("Couldn't authenticate user: {user} to {url}: the second factor in api_otp was not accepted (a TOTP code is valid for 30 seconds)"),
                        ))
                    }
                }
            }
            other => other,
        };
        match answer {
            Login::Ticket { ticket, csrf } => Ok((ticket, csrf)),
            _ => Err(rejected()),
        }
    }
}
