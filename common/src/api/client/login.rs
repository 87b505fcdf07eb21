//! Password login: `POST /access/ticket`, answering a TFA challenge with `api_otp`,
//! failing with 1.6's messages.

use super::auth::{self, Credentials, Login};
use super::{Answer, ApiError, ApiErrorKind, Client, Method};

impl Client {
    /// Password login: a ticket, answering a TFA challenge with `api_otp` when asked.
    pub(super) fn login(&self, user: &str, password: &str, otp: Option<&str>) -> Result<Credentials, ApiError> {
        let url = format!("{}/access/ticket", self.base_url);
        let rejected = || ApiError::other(ApiErrorKind::Auth, format!("Couldn't authenticate user: {user} to {url}"));
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
            Login::Ticket { ticket, csrf } => {
                // A ticket is as good as the password for two hours: never print it.
                crate::ansible::protocol::register_secret(&ticket);
                crate::ansible::protocol::register_secret(&csrf);
                Ok(Credentials::Ticket { cookie: ticket, csrf, user: user.to_string() })
            }
            _ => Err(rejected()),
        }
    }
}
