//! Redis 7.0's LFU access counter (evict.c), for OBJECT FREQ under an LFU
//! `maxmemory-policy`: an 8-bit logarithmic counter and the minute it was
//! last decremented, packed as Redis packs them into an object's 24-bit
//! `lru` field: `(minutes << 8) | counter`. Firn evicts nothing; the
//! counter only tells operators (and `redis-cli --hotkeys`) which keys are
//! hot.

/// A new key's counter (Redis's LFU_INIT_VAL), so that a key just written
/// is not the first to look cold.
pub const LFU_INIT_VAL: u8 = 5;

/// Redis's LFU settings: `lfu-log-factor` and `lfu-decay-time` (minutes).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LfuSettings {
    pub log_factor: u32,
    pub decay_minutes: u32,
}

/// Redis's LFUGetTimeInMinutes: the Unix time in minutes, 16 bits.
pub fn minutes_now(unix_secs: u64) -> u16 {
    ((unix_secs / 60) & 0xffff) as u16
}

/// A counter just created: [`LFU_INIT_VAL`] at `unix_secs`.
pub fn initial(unix_secs: u64) -> u32 {
    pack(minutes_now(unix_secs), LFU_INIT_VAL)
}

fn pack(minutes: u16, counter: u8) -> u32 {
    ((minutes as u32) << 8) | counter as u32
}

/// Redis's LFUTimeElapsed: minutes since `then`, the clock wrapping at 2¹⁶.
fn minutes_elapsed(then: u16, now: u16) -> u64 {
    if now >= then {
        (now - then) as u64
    } else {
        65535 - then as u64 + now as u64
    }
}

/// Minutes since a counter was last stamped (its last access).
pub fn minutes_since(packed: u32, unix_secs: u64) -> u64 {
    minutes_elapsed((packed >> 8) as u16, minutes_now(unix_secs))
}

/// Redis's LFUDecrAndReturn: the counter less one per `lfu-decay-time`
/// minutes elapsed since it was last decremented (not stored: OBJECT FREQ
/// only reads it).
pub fn decayed(packed: u32, unix_secs: u64, settings: LfuSettings) -> u8 {
    let then = (packed >> 8) as u16;
    let counter = (packed & 0xff) as u8;
    let periods = match settings.decay_minutes {
        0 => 0,
        decay => minutes_elapsed(then, minutes_now(unix_secs)) / decay as u64,
    };
    counter.saturating_sub(periods.min(255) as u8)
}

/// Redis's LFULogIncr: the counter grows by one with probability
/// 1 / ((counter - LFU_INIT_VAL) × lfu-log-factor + 1); `r` is a uniform
/// draw in [0, 1).
pub fn log_incr(counter: u8, log_factor: u32, r: f64) -> u8 {
    if counter == 255 {
        return 255;
    }
    let base = counter.saturating_sub(LFU_INIT_VAL) as f64;
    let p = 1.0 / (base * log_factor as f64 + 1.0);
    if r < p {
        counter + 1
    } else {
        counter
    }
}

/// Redis's updateLFU: decay, count one access, stamp the minute.
pub fn accessed(packed: u32, unix_secs: u64, settings: LfuSettings) -> u32 {
    let counter = decayed(packed, unix_secs, settings);
    let counter = log_incr(counter, settings.log_factor, rand::random::<f64>());
    pack(minutes_now(unix_secs), counter)
}

#[cfg(test)]
mod tests {
    use super::*;

    const DEFAULT: LfuSettings = LfuSettings {
        log_factor: 10,
        decay_minutes: 1,
    };

    #[test]
    fn a_factor_of_zero_counts_every_access_up_to_255() {
        let settings = LfuSettings {
            log_factor: 0,
            ..DEFAULT
        };
        let mut packed = initial(600);
        for _ in 0..300 {
            packed = accessed(packed, 600, settings);
        }
        assert_eq!(decayed(packed, 600, settings), 255);
    }

    #[test]
    fn counts_grow_logarithmically_with_the_default_factor() {
        // Redis's table (redis.conf): about 10 after 100 hits at factor 10,
        // 18 after 1,000. The increments are random: 1,000 hits keep the
        // count well inside the range asserted.
        let mut packed = initial(0);
        for _ in 0..1000 {
            packed = accessed(packed, 0, DEFAULT);
        }
        let counter = decayed(packed, 0, DEFAULT);
        assert!((10..=30).contains(&counter), "{counter}");
        // Below LFU_INIT_VAL + 1 every access counts.
        assert_eq!(log_incr(5, 10, 0.999), 6);
        assert_eq!(log_incr(6, 10, 0.5), 6);
        assert_eq!(log_incr(6, 10, 0.05), 7);
    }

    #[test]
    fn the_counter_decays_one_per_decay_time() {
        let packed = pack(minutes_now(0), 10);
        assert_eq!(decayed(packed, 59, DEFAULT), 10);
        assert_eq!(decayed(packed, 3 * 60, DEFAULT), 7);
        let slow = LfuSettings {
            decay_minutes: 2,
            ..DEFAULT
        };
        assert_eq!(decayed(packed, 3 * 60, slow), 9);
        let never = LfuSettings {
            decay_minutes: 0,
            ..DEFAULT
        };
        assert_eq!(decayed(packed, 1_000_000, never), 10);
        assert_eq!(decayed(packed, 100 * 60, DEFAULT), 0);
        // The 16-bit minute clock wraps as Redis's does.
        let late = pack(65534, 10);
        assert_eq!(minutes_elapsed(65534, 1), 2);
        assert_eq!(decayed(late, 60 * 65536 + 60, DEFAULT), 8);
    }
}
