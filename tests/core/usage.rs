//! Usage, cost and stop reasons.

use agentmsg::message::ModelPricing;
use agentmsg::{Cost, StopReason, Usage};

fn close(a: f64, b: f64) -> bool {
    (a - b).abs() < 1e-12
}

#[test]
fn estimated_cost_charges_reasoning_once() {
    // Claude Opus 4.5 list prices: $5 in, $25 out, $0.50 cache read, $6.25 cache write.
    let pricing = ModelPricing::new(5.0, 25.0, 0.5, 6.25);
    let usage = Usage {
        input: 2_000,
        output: 1_000,
        reasoning: 600,
        cache_read: 10_000,
        cache_write: 4_000,
        cache_write_1h: 0,
        total_tokens: Some(17_000),
        cost: None,
    };
    let cost = usage.estimated_cost(&pricing);
    assert!(close(cost.input, 0.01), "{cost:?}");
    assert!(
        close(cost.output, 0.025),
        "1000 output tokens, reasoning included: {cost:?}"
    );
    assert!(close(cost.cache_read, 0.005), "{cost:?}");
    assert!(close(cost.cache_write, 0.025), "{cost:?}");
    assert!(close(cost.total, 0.065), "{cost:?}");

    let without_reasoning = Usage {
        reasoning: 0,
        ..usage.clone()
    };
    assert_eq!(without_reasoning.estimated_cost(&pricing), cost);
}

#[test]
fn estimated_cost_of_nothing_is_zero() {
    let cost = Usage::default().estimated_cost(&ModelPricing::new(3.0, 15.0, 0.3, 3.75));
    assert_eq!(cost, Cost::default());
}

fn usage(input: u64, output: u64, reasoning: u64, cache_read: u64, cache_write: u64) -> Usage {
    Usage {
        input,
        output,
        reasoning,
        cache_read,
        cache_write,
        cache_write_1h: 0,
        total_tokens: Some(input + output + cache_read + cache_write),
        cost: None,
    }
}

#[test]
fn combine_adds_every_field() {
    let mut a = usage(100, 20, 5, 1_000, 50);
    a.cost = Some(Cost {
        input: 0.1,
        output: 0.2,
        cache_read: 0.3,
        cache_write: 0.4,
        total: 1.0,
    });
    let b = usage(7, 3, 1, 0, 9);
    let sum = a.combine(&b);
    assert_eq!(
        (
            sum.input,
            sum.output,
            sum.reasoning,
            sum.cache_read,
            sum.cache_write
        ),
        (107, 23, 6, 1_000, 59)
    );
    assert_eq!(sum.total_tokens, Some(1_170 + 19));
    assert_eq!(sum.cost, a.cost, "an unknown cost adds nothing");
    assert_eq!(b.combine(&a), sum, "combine is symmetric");
}

#[test]
fn totals_without_a_reported_total() {
    let reported = usage(10, 5, 0, 0, 0);
    let unreported = Usage {
        total_tokens: None,
        ..usage(1, 2, 0, 3, 4)
    };
    assert_eq!(unreported.total(), 10);
    assert_eq!(reported.combine(&unreported).total_tokens, Some(25));
    assert_eq!(unreported.combine(&unreported).total_tokens, None);
}

#[test]
fn add_add_assign_and_sum_agree_with_combine() {
    let parts = [
        usage(1, 2, 0, 3, 4),
        usage(10, 20, 5, 30, 40),
        usage(100, 0, 0, 0, 0),
    ];
    let combined = parts[0].combine(&parts[1]).combine(&parts[2]);

    assert_eq!(
        parts[0].clone() + parts[1].clone() + parts[2].clone(),
        combined
    );
    assert_eq!(parts[0].clone() + &parts[1] + &parts[2], combined);

    let mut acc = Usage::default();
    acc += parts[0].clone();
    acc += &parts[1];
    acc += parts[2].clone();
    assert_eq!(acc, combined);

    assert_eq!(parts.iter().sum::<Usage>(), combined);
    assert_eq!(parts.into_iter().sum::<Usage>(), combined);
    assert_eq!(
        Vec::<Usage>::new().into_iter().sum::<Usage>(),
        Usage::default()
    );
}

#[test]
fn costs_add() {
    let a = Cost {
        input: 1.0,
        output: 2.0,
        cache_read: 3.0,
        cache_write: 4.0,
        total: 10.0,
    };
    let mut b = a + a;
    assert_eq!(b.total, 20.0);
    b += a;
    assert_eq!(
        (b.input, b.output, b.cache_read, b.cache_write, b.total),
        (3.0, 6.0, 9.0, 12.0, 30.0)
    );
}

#[test]
fn cache_hit_rate() {
    assert_eq!(Usage::default().cache_hit_rate(), 0.0, "no input at all");
    assert_eq!(usage(0, 500, 0, 0, 0).cache_hit_rate(), 0.0, "output only");
    assert_eq!(usage(100, 0, 0, 300, 0).cache_hit_rate(), 0.75);
    assert_eq!(usage(0, 0, 0, 80, 20).cache_hit_rate(), 0.8);
    let saturated = Usage {
        input: u64::MAX,
        cache_read: u64::MAX,
        ..Usage::default()
    };
    assert!((0.0..=1.0).contains(&saturated.cache_hit_rate()));
}

#[test]
fn usage_json_is_pis() {
    let json = serde_json::json!({"input":2775,"output":141,"cacheRead":0,"cacheWrite":0,"totalTokens":2916,
        "cost":{"input":0.0139,"output":0.0035,"cacheRead":0,"cacheWrite":0,"total":0.0174}});
    let usage: Usage = serde_json::from_value(json.clone()).unwrap();
    assert_eq!(usage.reasoning, 0);
    assert_eq!(
        serde_json::to_value(&usage).unwrap(),
        json,
        "zero reasoning is not written"
    );
    let with_reasoning = Usage {
        reasoning: 40,
        ..usage
    };
    assert_eq!(
        serde_json::to_value(&with_reasoning).unwrap()["reasoning"],
        40
    );
    let old: Usage =
        serde_json::from_str(r#"{"input":1,"output":2,"cacheRead":0,"cacheWrite":0}"#).unwrap();
    assert_eq!((old.total_tokens, old.cost), (None, None));
}

#[test]
fn stop_reasons_are_camel_case() {
    let names = [
        "stop",
        "length",
        "toolUse",
        "error",
        "aborted",
        "maxTurns",
        "userStop",
        "handoff",
        "guardRail",
        "contextCompacted",
        "paused",
    ];
    assert_eq!(StopReason::ALL.len(), 11);
    for (reason, name) in StopReason::ALL.into_iter().zip(names) {
        assert_eq!(serde_json::to_value(reason).unwrap(), name);
        assert_eq!(
            serde_json::from_value::<StopReason>(name.into()).unwrap(),
            reason
        );
        assert_eq!(reason.as_str(), name);
        assert_eq!(reason.to_string(), name);
        assert_eq!(reason.is_failure(), matches!(name, "error" | "aborted"));
    }
    let err = serde_json::from_str::<StopReason>("\"tool_use\"").unwrap_err();
    assert!(
        err.to_string().contains("unknown variant `tool_use`"),
        "{err}"
    );
}

/// One-hour cache writes are a part of the writes, priced at their own rate
/// when the prices have one (at the writes' rate when not); they add, and
/// the JSON holds them only when there are some (so pi's files re-encode
/// unchanged).
#[test]
fn one_hour_cache_writes_are_a_part_of_the_writes_at_their_own_rate() {
    let usage = Usage {
        cache_write: 4_000_000,
        cache_write_1h: 1_000_000,
        ..Usage::default()
    };
    let five_minutes = ModelPricing::new(3.0, 15.0, 0.3, 3.75);
    assert!(close(usage.estimated_cost(&five_minutes).cache_write, 15.0));
    let both = five_minutes.with_cache_write_1h(6.0);
    let cost = usage.estimated_cost(&both);
    assert!(close(cost.cache_write, 3.0 * 3.75 + 6.0), "{cost:?}");
    assert!(close(cost.total, cost.cache_write), "{cost:?}");
    assert_eq!((usage.clone() + usage.clone()).cache_write_1h, 2_000_000);

    let json = serde_json::to_value(&usage).unwrap();
    assert_eq!(json["cacheWrite1h"], 1_000_000);
    assert_eq!(serde_json::from_value::<Usage>(json).unwrap(), usage);
    let plain = serde_json::to_string(&Usage::new(1, 2)).unwrap();
    assert!(!plain.contains("1h"), "{plain}");
    let old: Usage = serde_json::from_str(
        r#"{"input":1,"output":2,"cacheRead":0,"cacheWrite":5,"totalTokens":8}"#,
    )
    .unwrap();
    assert_eq!((old.cache_write, old.cache_write_1h), (5, 0));
}
