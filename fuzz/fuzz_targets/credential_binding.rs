//! The explorer's storage form and its secrets, each bound to one origin
//! (`deltalens_fetch_storage::credentials::Form`, issue #31). The input is lines, each an
//! operation on one form:
//!
//! ```text
//! s3_endpoint VALUE | s3_region VALUE | azure_endpoint VALUE | azure_account VALUE
//! relay VALUE | s3_virtual_hosted 1    settings (not secret)
//! relay_token.set X | azure_sas.set X  a secret typed: X empty, blank or a marker
//! s3.set KEY,SECRET,TOKEN              (any other X: a marker value, see `secret`)
//! open TABLE[ RELAY]                   the user's own Open: `bind_typed(TABLE, RELAY)`
//! link TABLE[ RELAY]                   a link: `options_for(TABLE, RELAY)`, checked
//! forget                               `without_secrets`
//! ```
//!
//! Invariants: after every `options_for` that returns a plan, every secret in its options
//! is the form's own value, for the kind of service the table is read from (a relay token
//! for a relay, S3 keys for S3, a SAS for Azure), and bound to exactly where the table's
//! requests go: `Endpoint::parse` of the plan's options succeeds, the secret's binding is
//! the plan's (the relay's or the Azure account's origin, the S3 bucket's URL), the
//! binding's origin is the endpoint's `credential_origin`, and `may_authorise` the table's
//! first commit (an S3 object is under the bound bucket URL); an unbound secret never
//! appears; `options_for` changes nothing; a bound secret's binding never changes through
//! `bind_typed` (only `set` clears it), and a newly bound one is bound to where that Open
//! goes, for its kind of service; `Form::from_stored(&form.to_stored())` gives the form
//! back without its unbound secrets (which are never stored) after every operation.
//! Secrets are marker values (`…FUZZMARK<n>`), so one that leaks into a URL, a `Debug`,
//! another field or a stored form is seen.
#![no_main]

use deltalens_fetch_storage::credentials::{Form, Plan, S3Keys, Secret};
use deltalens_fetch_storage::location::origin_of;
use deltalens_fetch_storage::{Endpoint, Service};

const MARK: &str = "FUZZMARK";
const LOG0: &str = "_delta_log/00000000000000000000.json";
const MAX_OPS: usize = 64;

/// A secret's value for argument `arg`: empty, blank (unfilled), or a marker unique to
/// this operation, keeping `arg`'s leading and trailing blanks (which the form trims).
fn secret(kind: &str, n: usize, arg: &str) -> String {
    if arg.trim().is_empty() {
        return arg.to_string();
    }
    let lead = &arg[..arg.len() - arg.trim_start().len()];
    let trail = &arg[arg.trim_end().len()..];
    format!("{lead}{kind}{MARK}{n}{trail}")
}

/// What identifies each of the form's secrets wherever it shows, also percent-encoded:
/// its marker with the letters before it (`rtokFUZZMARK5`, `sasFUZZMARK3`). A link
/// cannot spell one: its text holds no marker, and the `F` percent-encoding writes (`%2F`)
/// follows `%` and a hex digit, never a secret's letters. (The bare marker could be
/// spelled so: a link's `/UZZMARK2` is `%2FUZZMARK2` in a URL, a finding of this target
/// that was this check's, not a leak: fuzz/regressions/credential_binding.)
fn markers(form: &Form) -> Vec<String> {
    [
        &form.relay_token.value,
        &form.azure_sas.value,
        &form.s3.value.key,
        &form.s3.value.secret,
        &form.s3.value.token,
    ]
    .into_iter()
    .filter_map(|v| {
        let v = v.trim();
        let at = v.find(MARK)?;
        let start = v[..at]
            .rfind(|c: char| !c.is_ascii_alphanumeric())
            .map_or(0, |i| i + 1);
        let digits = v[at + MARK.len()..]
            .find(|c: char| !c.is_ascii_digit())
            .unwrap_or(v.len() - at - MARK.len());
        Some(v[start..at + MARK.len() + digits].to_string())
    })
    .collect()
}

/// `TABLE[ RELAY]`: the relay is absent without a space.
fn table_and_relay(arg: &str) -> (&str, Option<&str>) {
    match arg.split_once(' ') {
        Some((t, r)) => (t, Some(r)),
        None => (arg, None),
    }
}

fn trimmed(s: &str) -> Option<String> {
    let s = s.trim();
    (!s.is_empty()).then(|| s.to_string())
}

fn filled(s: &str) -> bool {
    !s.trim().is_empty()
}

fn s3_filled(k: &S3Keys) -> bool {
    filled(&k.key) || filled(&k.secret) || filled(&k.token)
}

/// The checks on a plan `options_for(table, relay)` returned.
fn check_plan(form: &Form, table: &str, relay: Option<&str>, plan: &Plan) {
    let o = &plan.options;
    let relay = relay.and_then(trimmed);
    // the settings are the form's, the relay the link's (never the form's)
    assert_eq!(o.relay, relay, "the plan's relay is not the one asked for");
    assert_eq!(o.s3_endpoint, trimmed(&form.s3_endpoint));
    assert_eq!(o.s3_region, trimmed(&form.s3_region));
    assert_eq!(o.azure_endpoint, trimmed(&form.azure_endpoint));
    assert_eq!(o.azure_account, trimmed(&form.azure_account));
    assert_eq!(o.s3_virtual_hosted, form.s3_virtual_hosted);

    let endpoint = Endpoint::parse(table, o)
        .unwrap_or_else(|e| panic!("the plan's options do not parse for {table:?}: {e}"));
    // where a secret for this table is bound: derived from the endpoint here
    let origin = endpoint.credential_origin();
    let scope = match &endpoint.service {
        // (a bucket URL without an origin, a virtual-hosted bucket on an IP endpoint, is
        // no place for keys: the fetch backend sends them nowhere)
        Service::S3 { bucket_url, .. } => origin.as_ref().map(|_| bucket_url.clone()),
        Service::Relay { .. } | Service::Azure { .. } => origin.clone(),
        Service::Http | Service::Gcs { .. } => None,
    };
    assert_eq!(
        plan.origin, scope,
        "the plan's binding is not where {table:?} goes ({:?})",
        endpoint.service
    );
    if let Some(s) = &scope {
        assert_eq!(
            origin_of(s),
            origin,
            "the binding {s} is not on the credential's origin"
        );
    }
    let object = endpoint.object_url(LOG0);
    let mut carried = Vec::new();

    // the relay token: the form's, bound to exactly the relay's origin, through a relay
    if let Some(t) = &o.relay_token {
        assert_eq!(Some(t.clone()), trimmed(&form.relay_token.value));
        let bound = form
            .relay_token
            .origin
            .as_deref()
            .unwrap_or_else(|| panic!("an unbound relay token goes to {origin:?}"));
        assert_eq!(
            scope.as_deref(),
            Some(bound),
            "a relay token bound to {bound} goes to {scope:?}"
        );
        assert!(relay.is_some(), "a relay token without a relay");
        assert!(
            matches!(&endpoint.service, Service::Relay { token: Some(_), .. }),
            "a relay token for {:?}",
            endpoint.service
        );
        carried.push(("relay token", bound));
    }
    // S3 keys: the form's, bound to exactly the bucket's origin, without a relay
    let s3 = [
        (&o.s3_access_key_id, &form.s3.value.key),
        (&o.s3_secret_access_key, &form.s3.value.secret),
        (&o.s3_session_token, &form.s3.value.token),
    ];
    if s3.iter().any(|(given, _)| given.is_some()) {
        for (given, value) in s3 {
            assert_eq!(*given, trimmed(value), "S3 keys that are not the form's");
        }
        let bound = form
            .s3
            .origin
            .as_deref()
            .unwrap_or_else(|| panic!("unbound S3 keys go to {origin:?}"));
        assert_eq!(
            scope.as_deref(),
            Some(bound),
            "S3 keys bound to {bound} go to {scope:?}"
        );
        assert!(relay.is_none(), "S3 keys go through a relay");
        assert!(
            matches!(&endpoint.service, Service::S3 { .. }),
            "S3 keys for {:?}",
            endpoint.service
        );
        assert!(
            object.starts_with(&format!("{bound}/")),
            "S3 keys bound to {bound} go with {object}"
        );
        carried.push(("S3 keys", bound));
    }
    // the SAS: the form's, bound to exactly the container's origin, without a relay
    if let Some(s) = &o.azure_sas {
        assert_eq!(Some(s.clone()), trimmed(&form.azure_sas.value));
        let bound = form
            .azure_sas
            .origin
            .as_deref()
            .unwrap_or_else(|| panic!("an unbound SAS goes to {origin:?}"));
        assert_eq!(
            scope.as_deref(),
            Some(bound),
            "a SAS bound to {bound} goes to {scope:?}"
        );
        assert!(relay.is_none(), "a SAS goes through a relay");
        assert!(
            matches!(&endpoint.service, Service::Azure { sas: Some(_), .. }),
            "a SAS for {:?}",
            endpoint.service
        );
        carried.push(("SAS token", bound));
    }
    // a secret goes with the table's own requests, and only to its origin
    for (kind, bound) in &carried {
        assert!(
            endpoint.may_authorise(&object),
            "the {kind} bound to {bound} would not go with {object}"
        );
        assert_eq!(
            origin_of(&object),
            origin_of(bound),
            "the {kind} bound to {bound} goes with {object}"
        );
        assert!(
            plan.secrets.iter().any(|s| s == kind),
            "{kind} not named among {:?}",
            plan.secrets
        );
    }
    assert_eq!(
        plan.secrets.len(),
        carried.len(),
        "secrets named {:?}, carried {carried:?}",
        plan.secrets
    );
    // the secrets are nowhere else
    let secrets = markers(form);
    for shown in [
        endpoint.root.clone(),
        object,
        format!("{o:?}"),
        format!("{endpoint:?}"),
        format!("{plan:?}"),
    ] {
        for m in &secrets {
            assert!(
                !shown.contains(m.as_str()),
                "a secret ({m}) shows in {shown}"
            );
        }
    }
    // and what is bound to exactly this binding, for this kind of service, is given
    if let Some(at) = scope.as_deref() {
        match &endpoint.service {
            Service::Relay { .. } => {
                if filled(&form.relay_token.value) && form.relay_token.origin.as_deref() == Some(at)
                {
                    assert!(
                        o.relay_token.is_some(),
                        "a relay token bound to {at} withheld"
                    );
                }
            }
            Service::S3 { .. } => {
                if s3_filled(&form.s3.value) && form.s3.origin.as_deref() == Some(at) {
                    assert!(
                        plan.secrets.contains(&"S3 keys"),
                        "S3 keys bound to {at} withheld"
                    );
                }
            }
            Service::Azure { .. } => {
                if filled(&form.azure_sas.value) && form.azure_sas.origin.as_deref() == Some(at) {
                    assert!(o.azure_sas.is_some(), "a SAS bound to {at} withheld");
                }
            }
            Service::Http | Service::Gcs { .. } => {}
        }
    }
}

/// A secret before and after the user's Open of a table: a bound one keeps its origin; an
/// unbound one stays unbound or is bound to `opened` (the Open's origin) when `kind_ok`.
fn check_bind<T: PartialEq>(
    name: &str,
    before: &Secret<T>,
    after: &Secret<T>,
    was_filled: bool,
    kind_ok: bool,
    opened: Option<&str>,
) {
    assert!(
        after.value == before.value,
        "an Open changed the {name}'s value"
    );
    match (&before.origin, &after.origin) {
        (Some(b), a) => assert_eq!(
            Some(b),
            a.as_ref(),
            "an Open moved the {name} bound to {b} to {a:?}"
        ),
        (None, Some(a)) => {
            assert!(was_filled, "an Open bound an empty {name} to {a}");
            assert!(
                kind_ok,
                "an Open bound the {name} to {a}: not its kind of request"
            );
            assert_eq!(
                Some(a.as_str()),
                opened,
                "an Open bound the {name} to {a}, not to where it goes"
            );
        }
        (None, None) => {}
    }
}

fn open(form: &mut Form, table: &str, relay: Option<&str>) {
    let before = form.clone();
    // where this Open sends requests (as a secret is bound), and to which kind of service
    let plan = form.options_for(table, relay).ok();
    let opened = plan.as_ref().and_then(|p| p.origin.clone());
    let service = plan
        .as_ref()
        .and_then(|p| Endpoint::parse(table, &p.options).ok())
        .map(|e| e.service);
    match form.bind_typed(table, relay) {
        Err(_) => assert_eq!(*form, before, "a failed Open changed the form"),
        Ok(bound) => {
            assert_eq!(
                bound, opened,
                "bind_typed's binding is not where the Open goes"
            );
            assert_eq!(
                form.without_secrets(),
                before.without_secrets(),
                "an Open changed the settings"
            );
            let opened = opened.as_deref();
            check_bind(
                "relay token",
                &before.relay_token,
                &form.relay_token,
                filled(&before.relay_token.value),
                matches!(service, Some(Service::Relay { .. })),
                opened,
            );
            check_bind(
                "S3 keys",
                &before.s3,
                &form.s3,
                s3_filled(&before.s3.value),
                matches!(service, Some(Service::S3 { .. })),
                opened,
            );
            check_bind(
                "SAS",
                &before.azure_sas,
                &form.azure_sas,
                filled(&before.azure_sas.value),
                matches!(service, Some(Service::Azure { .. })),
                opened,
            );
        }
    }
}

fn link(form: &Form, table: &str, relay: Option<&str>) {
    let before = form.clone();
    let plan = form.options_for(table, relay);
    assert_eq!(*form, before, "options_for changed the form");
    if let Ok(plan) = plan {
        check_plan(form, table, relay, &plan);
    }
}

deltalens_fuzz::target!(|data| {
    let Some(text) = deltalens_fuzz::text(data) else {
        return;
    };
    // settings, tables and relays never hold a marker: only the secrets do
    if text.contains(MARK) {
        return;
    }
    let mut form = Form::default();
    for (n, line) in text.split('\n').take(MAX_OPS).enumerate() {
        let (op, arg) = line.split_once(' ').unwrap_or((line, ""));
        match op {
            "s3_endpoint" => form.s3_endpoint = arg.into(),
            "s3_region" => form.s3_region = arg.into(),
            "azure_endpoint" => form.azure_endpoint = arg.into(),
            "azure_account" => form.azure_account = arg.into(),
            "relay" => form.relay = arg.into(),
            "s3_virtual_hosted" => form.s3_virtual_hosted = arg == "1" || arg == "true",
            "relay_token.set" => form.relay_token.set(secret("rtok", n, arg)),
            "azure_sas.set" => form.azure_sas.set(secret("sv=1&sig=sas", n, arg)),
            "s3.set" => {
                let mut parts = arg.splitn(3, ',');
                let mut next = |kind: &str| secret(kind, n, parts.next().unwrap_or(""));
                form.s3.set(S3Keys {
                    key: next("AKID"),
                    secret: next("s3secret"),
                    token: next("s3token"),
                });
            }
            "open" => {
                let (table, relay) = table_and_relay(arg);
                open(&mut form, table, relay);
            }
            // the user's Open through the relay in the form
            "open_form" => {
                let relay = form.relay.clone();
                open(&mut form, arg, Some(relay.as_str()));
            }
            "link" => {
                let (table, relay) = table_and_relay(arg);
                link(&form, table, relay);
            }
            "forget" => {
                form = form.without_secrets();
                assert!(!form.has_credentials(), "a form without secrets has some");
            }
            _ => continue,
        }
        for s in [
            &form.relay_token.origin,
            &form.s3.origin,
            &form.azure_sas.origin,
        ] {
            if let Some(s) = s {
                assert!(!s.contains(MARK), "a secret in a bound origin {s}");
            }
        }
        // stored: the form without its unbound secrets, which are nowhere in it
        let stored = form.to_stored();
        let mut kept = form.clone();
        if kept.relay_token.origin.is_none() {
            kept.relay_token = Secret::default();
        }
        if kept.s3.origin.is_none() {
            kept.s3 = Secret::default();
        }
        if kept.azure_sas.origin.is_none() {
            kept.azure_sas = Secret::default();
        }
        assert_eq!(
            Form::from_stored(&stored).as_ref(),
            Some(&kept),
            "the stored form does not read back"
        );
        let bound_values = [
            kept.relay_token.value.as_str(),
            kept.s3.value.key.as_str(),
            kept.s3.value.secret.as_str(),
            kept.s3.value.token.as_str(),
            kept.azure_sas.value.as_str(),
        ];
        for unbound in [
            (
                form.relay_token.origin.is_none(),
                vec![form.relay_token.value.as_str()],
            ),
            (
                form.s3.origin.is_none(),
                vec![
                    form.s3.value.key.as_str(),
                    form.s3.value.secret.as_str(),
                    form.s3.value.token.as_str(),
                ],
            ),
            (
                form.azure_sas.origin.is_none(),
                vec![form.azure_sas.value.as_str()],
            ),
        ] {
            if let (true, values) = unbound {
                for v in values.into_iter().filter(|v| v.contains(MARK)) {
                    let v = v.trim();
                    if !bound_values.iter().any(|b| b.contains(v)) {
                        assert!(!stored.contains(v), "an unbound secret is stored");
                    }
                }
            }
        }
    }
});
