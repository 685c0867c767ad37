//! List prices, for the cost column of `hall usage`. Costs are estimates at list price:
//! what a run would cost on the pay-as-you-go API, whatever plan actually pays for it.

/// US dollars per million tokens: input, output, cache write, cache read.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Price {
    pub input: f64,
    pub output: f64,
    pub cache_write: f64,
    pub cache_read: f64,
}

/// The price of a model by family (`opus`, `sonnet`, `haiku`), matched in its name, so
/// new versions are priced without a release. Unknown models are unpriced.
pub fn price(model: &str) -> Option<Price> {
    let m = model.to_ascii_lowercase();
    if m.contains("opus") {
        Some(Price {
            input: 5.0,
            output: 25.0,
            cache_write: 6.25,
            cache_read: 0.50,
        })
    } else if m.contains("sonnet") {
        Some(Price {
            input: 3.0,
            output: 15.0,
            cache_write: 3.75,
            cache_read: 0.30,
        })
    } else if m.contains("haiku") {
        Some(Price {
            input: 1.0,
            output: 5.0,
            cache_write: 1.25,
            cache_read: 0.10,
        })
    } else {
        None
    }
}

/// The list-price cost of a set of token counts.
pub fn cost(model: &str, input: u64, output: u64, cache_write: u64, cache_read: u64) -> f64 {
    let Some(p) = price(model) else { return 0.0 };
    let per = |n: u64, rate: f64| n as f64 * rate / 1_000_000.0;
    per(input, p.input)
        + per(output, p.output)
        + per(cache_write, p.cache_write)
        + per(cache_read, p.cache_read)
}

#[cfg(test)]
mod tests {
    #[test]
    fn families_are_priced_and_unknowns_are_not() {
        assert!((super::cost("claude-sonnet-5-5", 1_000_000, 0, 0, 0) - 3.0).abs() < 1e-9);
        assert!((super::cost("claude-opus-4-8", 0, 1_000_000, 0, 0) - 25.0).abs() < 1e-9);
        assert_eq!(super::cost("gpt-x", 1_000_000, 1, 1, 1), 0.0);
    }
}
