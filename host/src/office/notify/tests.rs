use super::*;
use crate::item::ItemId;

fn at(s: &str) -> SystemTime {
    crate::clock::parse(s).expect("a time")
}

fn entry(kind: &str, id: u32, since: &str) -> Entry {
    Entry {
        n: 0,
        kind: kind.into(),
        item: Some(ItemId(id)),
        text: format!("H-{id:04} \"Secret title\" is held ({kind}): test output src/app.rs:12"),
        since: since.into(),
        key: format!("{kind}:H-{id:04}"),
        dismissed: false,
        next: vec![format!("hall retry H-{id:04} --reason \"…\"")],
    }
}

fn row(e: &Entry, channel: &str, how: &str, reminder: u32, t: &str) -> NotifiedRow {
    NotifiedRow {
        key: e.key.clone(),
        stamp: e.since.clone(),
        kind: e.kind.clone(),
        channel: channel.into(),
        how: how.into(),
        reminder,
        t: t.into(),
        text: if how == "deferred" {
            "a line".into()
        } else {
            String::new()
        },
    }
}

fn notify(text: &str) -> Notify {
    crate::config::notify::from_text(text, Path::new("/u/config.toml"), false)
        .expect("parses")
        .expect("has [notify]")
}

fn utc() -> jiff::tz::TimeZone {
    jiff::tz::TimeZone::UTC
}

fn sends(actions: &[Action]) -> Vec<(String, &'static str, u32)> {
    actions
        .iter()
        .filter_map(|a| match a {
            Action::Send {
                entry,
                channel,
                reminder,
            } => Some((entry.key.clone(), channel.as_str(), *reminder)),
            _ => None,
        })
        .collect()
}

#[test]
fn each_new_entry_goes_once_to_each_routed_channel() {
    let n = notify(
        "[notify]\nchannels = [\"desktop\", \"ntfy\"]\n[notify.ntfy]\ntopic = \"t\"\n[notify.route]\n\"ready?\" = [\"desktop\"]\nlit = []\n",
    );
    let held = entry("checks", 1, "2026-12-05T10:00:00Z");
    let ready = entry("ready?", 2, "2026-12-05T10:01:00Z");
    let lit = entry("lit", 3, "2026-12-05T10:02:00Z");
    let mut dismissed = entry("budget", 4, "2026-12-05T10:03:00Z");
    dismissed.dismissed = true;
    let notice = entry("stuck", 5, "2026-12-05T10:04:00Z");
    let all = [held.clone(), ready.clone(), lit, dismissed, notice];
    let now = at("2026-12-05T12:00:00Z");
    let actions = plan(&n, &all, &[], now, &utc());
    assert_eq!(
        sends(&actions),
        vec![
            ("checks:H-0001".to_string(), "desktop", 0),
            ("checks:H-0001".to_string(), "ntfy", 0),
            ("ready?:H-0002".to_string(), "desktop", 0),
        ],
        "routes followed; a silenced kind, a dismissed entry and a notice never sent"
    );
    // Once recorded, nothing more (no `remind`).
    let records = vec![
        row(&held, "desktop", "sent", 0, "2026-12-05T12:00:00Z"),
        row(&held, "ntfy", "sent", 0, "2026-12-05T12:00:00Z"),
        row(&ready, "desktop", "sent", 0, "2026-12-05T12:00:00Z"),
    ];
    assert!(plan(&n, &all, &records, at("2026-12-06T12:00:00Z"), &utc()).is_empty());
    // The same entry again with a new stamp (it changed) is new.
    let again = entry("checks", 1, "2026-12-06T09:00:00Z");
    assert_eq!(sends(&plan(&n, &[again], &records, now, &utc())).len(), 2);
}

#[test]
fn reminders_repeat_an_unanswered_escalation_every_interval() {
    let n = notify("[notify]\nchannels = [\"desktop\"]\nremind = \"2h\"\n");
    let e = entry("escalated", 7, "2026-12-05T08:00:00Z");
    let first = vec![row(&e, "desktop", "sent", 0, "2026-12-05T08:00:10Z")];
    // The plan for `e` alone, given what was recorded, at `t`.
    let plan_at = |records: &[NotifiedRow], t: &str| {
        plan(&n, std::slice::from_ref(&e), records, at(t), &utc())
    };
    assert!(plan_at(&first, "2026-12-05T09:59:00Z").is_empty());
    assert_eq!(
        sends(&plan_at(&first, "2026-12-05T10:00:10Z")),
        vec![("escalated:H-0007".to_string(), "desktop", 1)]
    );
    let mut second = first.clone();
    second.push(row(&e, "desktop", "sent", 1, "2026-12-05T10:00:10Z"));
    assert!(plan_at(&second, "2026-12-05T11:00:00Z").is_empty());
    assert_eq!(
        sends(&plan_at(&second, "2026-12-05T12:30:00Z")),
        vec![("escalated:H-0007".to_string(), "desktop", 2)]
    );
    // Dismissed: no more reminders.
    let mut seen = e.clone();
    seen.dismissed = true;
    assert!(plan(&n, &[seen], &second, at("2026-12-06T12:30:00Z"), &utc()).is_empty());
}

#[test]
fn quiet_hours_hold_the_phone_back_for_the_digest_and_let_the_desktop_show() {
    let n = notify(
        "[notify]\nchannels = [\"desktop\", \"telegram\"]\nquiet = \"22:00-07:00\"\ndigest = \"08:00\"\nremind = \"1h\"\n[notify.telegram]\ntoken_env = \"TG\"\nchat_id = \"1\"\n",
    );
    let e = entry("question", 3, "2026-12-05T23:10:00Z");
    let night = at("2026-12-05T23:15:00Z");
    let actions = plan(&n, std::slice::from_ref(&e), &[], night, &utc());
    assert_eq!(
        sends(&actions),
        vec![("question:H-0003".to_string(), "desktop", 0)]
    );
    assert!(
        actions.iter().any(|a| matches!(
            a,
            Action::Defer {
                channel: Channel::Telegram,
                ..
            }
        )),
        "{actions:?}"
    );
    let mut records = vec![
        row(&e, "desktop", "sent", 0, "2026-12-05T23:15:00Z"),
        row(&e, "telegram", "deferred", 0, "2026-12-05T23:15:00Z"),
    ];
    // At 07:30 the quiet is over, but the digest is at 08:00: the deferred message
    // waits for it, and its reminder on the desktop runs on.
    let early = plan(
        &n,
        std::slice::from_ref(&e),
        &records,
        at("2026-12-06T07:30:00Z"),
        &utc(),
    );
    assert_eq!(
        sends(&early),
        vec![("question:H-0003".to_string(), "desktop", 1)]
    );
    assert!(!early.iter().any(|a| matches!(a, Action::Digest { .. })));
    // The entry was answered before morning: it still reaches the digest.
    let morning = plan(&n, &[], &records, at("2026-12-06T08:00:00Z"), &utc());
    match &morning[..] {
        [
            Action::Digest {
                channel: Channel::Telegram,
                deferred,
                waiting,
                date,
            },
        ] => {
            assert_eq!(deferred.len(), 1);
            assert!(waiting.is_empty());
            assert_eq!(date.as_deref(), Some("2026-12-06"));
        }
        other => panic!("{other:?}"),
    }
    // Once the digest is recorded, the morning is done.
    records.push(row(&e, "telegram", "digest", 0, "2026-12-06T08:00:00Z"));
    let marker = Entry {
        key: "digest:2026-12-06".into(),
        since: "2026-12-06".into(),
        kind: "digest".into(),
        ..e.clone()
    };
    records.push(row(
        &marker,
        "telegram",
        "digest",
        0,
        "2026-12-06T08:00:00Z",
    ));
    assert!(plan(&n, &[], &records, at("2026-12-06T09:00:00Z"), &utc()).is_empty());
}

#[test]
fn without_a_digest_time_what_quiet_held_goes_out_when_it_ends_and_hours_are_local() {
    let n = notify(
        "[notify]\nchannels = [\"ntfy\"]\nquiet = \"22:00-07:00\"\n[notify.ntfy]\ntopic = \"t\"\n",
    );
    let e = entry("checks", 2, "2026-12-05T21:30:00Z");
    // 21:30 UTC is 22:30 in UTC+1: quiet there, not in UTC.
    let plus_one = jiff::tz::TimeZone::fixed(jiff::tz::offset(1));
    let now = at("2026-12-05T21:30:00Z");
    assert_eq!(
        sends(&plan(&n, std::slice::from_ref(&e), &[], now, &utc())).len(),
        1
    );
    let held = plan(&n, std::slice::from_ref(&e), &[], now, &plus_one);
    assert!(matches!(held[..], [Action::Defer { .. }]), "{held:?}");
    let records = vec![row(&e, "ntfy", "deferred", 0, "2026-12-05T21:30:00Z")];
    assert!(
        plan(
            &n,
            std::slice::from_ref(&e),
            &records,
            at("2026-12-06T05:59:00Z"),
            &plus_one
        )
        .is_empty()
    );
    let after = plan(
        &n,
        std::slice::from_ref(&e),
        &records,
        at("2026-12-06T06:00:00Z"),
        &plus_one,
    );
    assert!(
        matches!(&after[..], [Action::Digest { deferred, date: None, .. }] if deferred.len() == 1),
        "{after:?}"
    );
}

#[test]
fn a_message_carries_the_item_the_question_and_the_command_only() {
    let held = entry("checks", 12, "2026-12-05T10:00:00Z");
    let m = message(&held, "shop", 0);
    assert_eq!(m.title, "hall · shop: H-0012 is held (checks)");
    assert_eq!(m.body, "H-0012: its checks failed too often in a row.");
    assert_eq!(m.answer, "hall retry H-0012 --reason \"…\"");
    let plain = m.plain();
    for secret in ["Secret title", "src/app.rs", "test output"] {
        assert!(!plain.contains(secret), "{secret} leaked: {plain}");
    }
    let q = Entry {
        kind: "question".into(),
        text: "Q-4: billed or raw? [billed, raw]".into(),
        key: "question:Q-4".into(),
        next: vec!["hall answer Q-4 \"…\"".into()],
        ..held.clone()
    };
    let m = message(&q, "shop", 2);
    assert_eq!(m.body, "Reminder 2: Q-4: billed or raw? [billed, raw]");
    assert_eq!(m.key, "question:Q-4@2026-12-05T10:00:00Z#2");
}

#[test]
fn the_person_gives_the_addresses_of_the_channels_a_repository_names() {
    let repo = crate::config::notify::from_text(
        "[notify]\nchannels = [\"desktop\", \"telegram\"]\nremind = \"4h\"\n[notify.route]\nlit = []\n",
        Path::new("/r/.hallmark.toml"),
        true,
    )
    .expect("parses")
    .expect("has [notify]");
    // Alone, the repository's settings name a channel nobody can reach.
    assert!(
        merge(Some(&repo), None)
            .expect_err("incomplete")
            .contains("chat_id")
    );
    let user: toml::Table =
        "[telegram]\nchat_id = \"42\"\ntoken_env = \"TG\"\n[route]\nquestion = [\"desktop\"]\n"
            .parse()
            .expect("toml");
    let n = merge(Some(&repo), Some(&user)).expect("complete");
    assert_eq!(n.channels, [Channel::Desktop, Channel::Telegram]);
    assert_eq!(n.remind, "4h");
    assert_eq!(n.telegram.chat_id.as_deref(), Some("42"));
    assert_eq!(n.telegram.api, "https://api.telegram.org");
    // Routes merge kind by kind.
    assert_eq!(n.routed("question"), &[Channel::Desktop]);
    assert!(n.routed("lit").is_empty());
}
