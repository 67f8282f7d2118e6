//! A page's storage form and its secrets, each bound to the one origin it was entered for
//! (the explorer keeps it; this crate attaches what it allows to requests).
//!
//! A secret (relay token, S3 keys, Azure SAS) is typed into the form unbound; the user's
//! own Open binds it to the origin that open sends it to ([`Form::bind_typed`]), and from
//! then on [`Form::options_for`] — the only way the page turns the form into storage
//! options — gives it to a table only when that table's requests go to exactly that
//! origin (the fetch backend then sends it to that origin only). Nothing from the page
//! URL is ever written into the form: a link's relay (`via=`) is passed beside it, so a
//! link can neither move a secret nor change what is stored (the explorer stores the form
//! from the user's Open only, with "remember" ticked).

use serde::{Deserialize, Serialize};

use crate::location::{BrowserOptions, Endpoint, LocationError, Service};

/// The storage form: settings (not secret) and secrets with the origin each is bound to.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct Form {
    /// S3-compatible endpoint; AWS when empty.
    pub s3_endpoint: String,
    /// S3 region (`us-east-1` when empty).
    pub s3_region: String,
    /// `bucket.host/key` instead of `host/bucket/key`.
    pub s3_virtual_hosted: bool,
    /// Azure blob endpoint including the account (azurite); Azure's when empty.
    pub azure_endpoint: String,
    /// Storage account for `az://container/path`.
    pub azure_account: String,
    /// The user's own relay (`deltalens serve`, a worker), typed in the form; a link's
    /// relay is never written here.
    pub relay: String,
    /// S3 access keys, bound to a bucket.
    pub s3: Secret<S3Keys>,
    /// Azure SAS token, bound to an account's origin.
    pub azure_sas: Secret<String>,
    /// Bearer token for a relay that needs one.
    pub relay_token: Secret<String>,
}

/// S3 access keys, as typed (`Debug` hides them).
#[derive(Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct S3Keys {
    /// Access key id.
    pub key: String,
    /// Secret access key (signs requests; never sent).
    pub secret: String,
    /// Session token of temporary credentials (empty for long-term keys).
    pub token: String,
}

impl std::fmt::Debug for S3Keys {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("S3Keys(<hidden>)")
    }
}

/// A secret and where it is bound: an origin (`scheme://host:port`; for S3 keys the
/// bucket's URL); `None` while it is typed and not yet used by the user's own Open.
#[derive(Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct Secret<T> {
    /// The secret as typed.
    pub value: T,
    /// Where it is bound; `None` until the user's own Open binds it.
    pub origin: Option<String>,
}

impl<T> std::fmt::Debug for Secret<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Secret(<hidden>, {:?})", self.origin)
    }
}

impl<T: Filled + Default> Secret<T> {
    /// Typed anew: bound to nothing until the user's next Open.
    pub fn set(&mut self, value: T) {
        self.value = value;
        self.origin = None;
    }

    fn filled(&self) -> bool {
        self.value.filled()
    }

    /// The value when it is bound to exactly `origin`.
    fn for_origin(&self, origin: Option<&str>) -> Option<&T> {
        (self.filled() && origin.is_some() && self.origin.as_deref() == origin)
            .then_some(&self.value)
    }

    /// Forget the value when it is bound to nothing.
    fn drop_unbound(&mut self) {
        if self.origin.is_none() {
            self.value = T::default();
        }
    }

    /// Bind a typed (unbound) value to `origin`; a bound one keeps its origin.
    fn bind(&mut self, origin: Option<&str>) {
        if self.filled() && self.origin.is_none() {
            self.origin = origin.map(str::to_string);
        }
    }
}

/// Whether a secret holds anything.
pub trait Filled {
    /// Whether it holds anything but blanks.
    fn filled(&self) -> bool;
}

impl Filled for String {
    fn filled(&self) -> bool {
        !self.trim().is_empty()
    }
}

impl Filled for S3Keys {
    fn filled(&self) -> bool {
        self.key.filled() || self.secret.filled() || self.token.filled()
    }
}

/// Where a table is read, and which of the form's secrets go with it.
#[derive(Debug, Clone, PartialEq)]
pub struct Plan {
    /// The storage options, with only the secrets bound to [`Plan::origin`].
    pub options: BrowserOptions,
    /// Where the table's requests go, as a secret is bound (the relay's origin, the S3
    /// bucket's URL, the Azure account's origin), when a secret can be bound there.
    pub origin: Option<String>,
    /// The kinds of secret the options carry ("relay token", "S3 keys", "SAS token").
    pub secrets: Vec<&'static str>,
}

fn some(s: &str) -> Option<String> {
    let s = s.trim();
    (!s.is_empty()).then(|| s.to_string())
}

/// Where a table's requests go, as secrets are bound.
enum Target {
    Relay(Option<String>),
    S3(Option<String>),
    Azure(Option<String>),
    None,
}

impl Target {
    fn scope(self) -> Option<String> {
        match self {
            Target::Relay(s) | Target::S3(s) | Target::Azure(s) => s,
            Target::None => None,
        }
    }
}

const STORED_VERSION: u32 = 2;

#[derive(Serialize, Deserialize)]
struct Stored {
    v: u32,
    form: Form,
}

impl Form {
    /// The settings alone, read through `relay` (absolute, as resolved against the page).
    fn settings(&self, relay: Option<String>) -> BrowserOptions {
        BrowserOptions {
            s3_endpoint: some(&self.s3_endpoint),
            s3_region: some(&self.s3_region),
            s3_virtual_hosted: self.s3_virtual_hosted,
            azure_endpoint: some(&self.azure_endpoint),
            azure_account: some(&self.azure_account),
            relay,
            ..BrowserOptions::default()
        }
    }

    /// Where `table`, read through `relay` (resolved), sends its requests, as a secret is
    /// bound to it: the kind of service and its scope — the relay's origin, the S3
    /// bucket's URL (origin and, path-style, the bucket: every bucket of an endpoint shares
    /// its origin), the Azure account's origin; `None` for services without secrets.
    fn target(&self, table: &str, relay: Option<&str>) -> Result<Target, LocationError> {
        let endpoint = Endpoint::parse(table, &self.settings(relay.map(str::to_string)))?;
        Ok(match &endpoint.service {
            Service::Relay { .. } => Target::Relay(endpoint.credential_origin()),
            // a bucket URL without an origin (a virtual-hosted bucket on an IP
            // endpoint) is no place to bind keys to: the fetch backend sends them nowhere
            Service::S3 { bucket_url, .. } => {
                Target::S3(endpoint.credential_origin().map(|_| bucket_url.clone()))
            }
            Service::Azure { .. } => Target::Azure(endpoint.credential_origin()),
            Service::Http | Service::Gcs { .. } => Target::None,
        })
    }

    /// The storage options for reading `table` through `relay` (absolute, as resolved
    /// against the page; `None`: straight from storage): the settings, and each secret
    /// only when it is for that kind of service and bound to exactly where the table's
    /// requests go. The only way the page gets options with a secret.
    pub fn options_for(&self, table: &str, relay: Option<&str>) -> Result<Plan, LocationError> {
        let relay = relay.and_then(some);
        let target = self.target(table, relay.as_deref())?;
        let mut options = self.settings(relay);
        let mut secrets = Vec::new();
        match &target {
            Target::Relay(at) => {
                if let Some(t) = self.relay_token.for_origin(at.as_deref()) {
                    options.relay_token = some(t);
                    secrets.push("relay token");
                }
            }
            Target::S3(at) => {
                if let Some(k) = self.s3.for_origin(at.as_deref()) {
                    options.s3_access_key_id = some(&k.key);
                    options.s3_secret_access_key = some(&k.secret);
                    options.s3_session_token = some(&k.token);
                    secrets.push("S3 keys");
                }
            }
            Target::Azure(at) => {
                if let Some(s) = self.azure_sas.for_origin(at.as_deref()) {
                    options.azure_sas = some(s);
                    secrets.push("SAS token");
                }
            }
            Target::None => {}
        }
        Ok(Plan {
            options,
            origin: target.scope(),
            secrets,
        })
    }

    /// The user's own Open of `table` (a URL the user typed or picked from their own
    /// opens, never one a link put in the field) through `relay`: the secrets typed since
    /// they were last bound are bound to where this open sends requests — the relay token
    /// when it goes through a relay, the keys to an S3 bucket, the SAS to an Azure
    /// account. Nothing else binds a secret. Returns where it binds (`None`: nothing).
    pub fn bind_typed(
        &mut self,
        table: &str,
        relay: Option<&str>,
    ) -> Result<Option<String>, LocationError> {
        let relay = relay.and_then(some);
        let target = self.target(table, relay.as_deref())?;
        match &target {
            Target::Relay(at) => self.relay_token.bind(at.as_deref()),
            Target::S3(at) => self.s3.bind(at.as_deref()),
            Target::Azure(at) => self.azure_sas.bind(at.as_deref()),
            Target::None => {}
        }
        Ok(target.scope())
    }

    /// The settings, without any secret ("Open without credentials").
    pub fn without_secrets(&self) -> Form {
        Form {
            s3: Secret::default(),
            azure_sas: Secret::default(),
            relay_token: Secret::default(),
            ..self.clone()
        }
    }

    /// Whether any secret is filled in (bound or not).
    pub fn has_credentials(&self) -> bool {
        self.s3.filled() || self.azure_sas.filled() || self.relay_token.filled()
    }

    /// What the form holds, as stored (the user's Open with "remember" ticked).
    /// A secret bound to nothing is not stored: it would wait for whatever Open comes
    /// next, in a later session too.
    pub fn to_stored(&self) -> String {
        let mut form = self.clone();
        form.s3.drop_unbound();
        form.azure_sas.drop_unbound();
        form.relay_token.drop_unbound();
        serde_json::to_string(&Stored {
            v: STORED_VERSION,
            form,
        })
        .unwrap_or_default()
    }

    /// The form stored by [`Form::to_stored`]; `None` for anything else (an older
    /// format's secrets were bound to nothing: they are not kept).
    pub fn from_stored(raw: &str) -> Option<Form> {
        let s: Stored = deltalens_json::from_str(raw).ok()?;
        (s.v == STORED_VERSION).then_some(s.form)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const TEAM: &str = "http://127.0.0.1:8080";
    const OTHER: &str = "http://127.0.0.1:9999";

    fn team_token() -> Form {
        let mut f = Form {
            relay: TEAM.into(),
            ..Form::default()
        };
        f.relay_token.set("tok-123456".into());
        f.bind_typed("s3://bkt/t", Some(TEAM)).ok();
        f
    }

    #[test]
    fn a_relay_token_goes_to_the_origin_it_was_entered_for_only() {
        let f = team_token();
        assert_eq!(
            f.relay_token.origin.as_deref(),
            Some("http://127.0.0.1:8080")
        );
        let p = f
            .options_for("s3://x/y", Some("http://127.0.0.1:8080/"))
            .unwrap();
        assert_eq!(p.options.relay_token.as_deref(), Some("tok-123456"));
        for other in [
            OTHER,
            "http://localhost:8080",
            "https://127.0.0.1:8080",
            "http://127.0.0.1",
        ] {
            let p = f.options_for("s3://x/y", Some(other)).unwrap();
            assert_eq!(p.options.relay_token, None, "{other}");
            assert!(p.secrets.is_empty());
        }
        // read straight from storage: no relay, no token
        assert_eq!(
            f.options_for("https://h/t", None)
                .unwrap()
                .options
                .relay_token,
            None
        );
    }

    #[test]
    fn only_the_users_open_binds_and_a_bound_secret_never_moves() {
        let mut f = team_token();
        // another open (a link's relay) does not rebind the bound token
        f.bind_typed("s3://x/y", Some(OTHER)).unwrap();
        assert_eq!(f.relay_token.origin.as_deref(), Some(TEAM));
        // typed anew: unbound, sent nowhere until the user's open binds it
        f.relay_token.set("tok-new-7890".into());
        assert_eq!(
            f.options_for("s3://x/y", Some(TEAM))
                .unwrap()
                .options
                .relay_token,
            None
        );
        f.bind_typed("s3://x/y", Some(OTHER)).unwrap();
        assert_eq!(
            f.options_for("s3://x/y", Some(OTHER))
                .unwrap()
                .options
                .relay_token
                .as_deref(),
            Some("tok-new-7890")
        );
        assert_eq!(
            f.options_for("s3://x/y", Some(TEAM))
                .unwrap()
                .options
                .relay_token,
            None
        );
    }

    #[test]
    fn keys_bind_to_their_bucket_and_sas_to_its_account() {
        let mut f = Form {
            s3_endpoint: "http://127.0.0.1:9000".into(),
            azure_endpoint: "http://127.0.0.1:10000/devstoreaccount1".into(),
            ..Form::default()
        };
        f.s3.set(S3Keys {
            key: "AKIAKEY".into(),
            secret: "s3cr3t".into(),
            token: String::new(),
        });
        f.azure_sas.set("sv=1&sig=abc".into());
        // an Azure open binds the SAS only
        assert_eq!(
            f.bind_typed("az://cont/t", None).unwrap().as_deref(),
            Some("http://127.0.0.1:10000")
        );
        assert_eq!(
            f.azure_sas.origin.as_deref(),
            Some("http://127.0.0.1:10000")
        );
        assert_eq!(f.s3.origin, None);
        // S3 keys bind to the bucket: every bucket of an endpoint shares its origin
        f.bind_typed("s3://bkt/t", None).unwrap();
        assert_eq!(f.s3.origin.as_deref(), Some("http://127.0.0.1:9000/bkt"));
        let p = f.options_for("s3://bkt/other/t", None).unwrap();
        assert_eq!(p.options.s3_access_key_id.as_deref(), Some("AKIAKEY"));
        assert_eq!(p.options.azure_sas, None);
        assert_eq!(p.secrets, ["S3 keys"]);
        for other in ["s3://bkt2/t", "s3://other/bkt/t"] {
            assert!(
                f.options_for(other, None).unwrap().secrets.is_empty(),
                "{other}"
            );
        }
        // a SAS only for Azure, even on an origin where S3 keys are bound
        let p = f.options_for("az://anycont/t", None).unwrap();
        assert_eq!(p.secrets, ["SAS token"]);
        // through a relay, no storage secret goes anywhere
        let p = f.options_for("s3://bkt/t", Some(TEAM)).unwrap();
        assert!(p.options.s3_access_key_id.is_none() && p.options.azure_sas.is_none());
        // another endpoint: nothing
        f.s3_endpoint = OTHER.into();
        assert!(
            f.options_for("s3://bkt/t", None)
                .unwrap()
                .secrets
                .is_empty()
        );
    }

    /// A fuzz finding (fuzz/regressions/credential_binding): a virtual-hosted bucket on an
    /// IP endpoint has no origin; keys were bound to its URL and given to it.
    #[test]
    fn keys_never_bind_where_requests_have_no_origin() {
        let mut f = Form {
            s3_endpoint: "http://127.0.0.1:9000".into(),
            s3_virtual_hosted: true,
            ..Form::default()
        };
        f.s3.set(S3Keys {
            key: "k".into(),
            secret: "s".into(),
            token: String::new(),
        });
        assert_eq!(f.bind_typed("s3://b/t", None).unwrap(), None);
        assert_eq!(f.s3.origin, None);
        assert!(f.options_for("s3://b/t", None).unwrap().secrets.is_empty());
    }

    #[test]
    fn unbound_secrets_are_not_stored_and_debug_hides_every_secret() {
        let mut f = team_token();
        f.s3.set(S3Keys {
            key: "AKIAUNBOUND".into(),
            secret: "unbound-secret".into(),
            token: "unbound-token".into(),
        });
        let stored = f.to_stored();
        assert!(
            !stored.contains("UNBOUND") && !stored.contains("unbound-"),
            "{stored}"
        );
        assert!(stored.contains("tok-123456"), "the bound token is kept");
        let shown = format!("{f:?} {:?}", f.s3.value);
        assert!(
            !shown.contains("unbound") && !shown.contains("tok-123456"),
            "{shown}"
        );
    }

    #[test]
    fn stored_forms_keep_their_bindings_and_older_formats_are_dropped() {
        let f = team_token();
        assert_eq!(Form::from_stored(&f.to_stored()), Some(f));
        let old = r#"[["","","","","","","","","http://evil","tok"],false]"#;
        assert_eq!(Form::from_stored(old), None);
    }
}
