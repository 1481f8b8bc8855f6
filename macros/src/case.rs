//! serde's `rename_all` rules (serde_derive's `case.rs`): the key serde gives a
//! field, so the reserved-key check sees what serde will write.

use self::RenameRule::*;

/// A `#[serde(rename_all = "…")]` rule.
#[allow(clippy::enum_variant_names)] // serde_derive's names, each a case style
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum RenameRule {
    LowerCase,
    UpperCase,
    PascalCase,
    CamelCase,
    SnakeCase,
    ScreamingSnakeCase,
    KebabCase,
    ScreamingKebabCase,
}

static RENAME_RULES: &[(&str, RenameRule)] = &[
    ("lowercase", LowerCase),
    ("UPPERCASE", UpperCase),
    ("PascalCase", PascalCase),
    ("camelCase", CamelCase),
    ("snake_case", SnakeCase),
    ("SCREAMING_SNAKE_CASE", ScreamingSnakeCase),
    ("kebab-case", KebabCase),
    ("SCREAMING-KEBAB-CASE", ScreamingKebabCase),
];

impl RenameRule {
    /// The rule named `name`; `None` for a name serde does not know (serde
    /// reports it).
    pub fn from_name(name: &str) -> Option<Self> {
        RENAME_RULES
            .iter()
            .find(|(rule_name, _)| *rule_name == name)
            .map(|&(_, rule)| rule)
    }

    /// The key of a field named `field` (without `r#`), exactly as serde
    /// computes it: ASCII case changes only, and `lowercase` keeps a field name
    /// as written.
    pub fn apply_to_field(self, field: &str) -> String {
        match self {
            LowerCase | SnakeCase => field.to_owned(),
            UpperCase | ScreamingSnakeCase => field.to_ascii_uppercase(),
            PascalCase => {
                let mut pascal = String::new();
                let mut capitalize = true;
                for ch in field.chars() {
                    if ch == '_' {
                        capitalize = true;
                    } else if capitalize {
                        pascal.push(ch.to_ascii_uppercase());
                        capitalize = false;
                    } else {
                        pascal.push(ch);
                    }
                }
                pascal
            }
            CamelCase => {
                let mut camel = PascalCase.apply_to_field(field);
                if let Some(first) = camel.get_mut(..1) {
                    first.make_ascii_lowercase();
                }
                camel
            }
            KebabCase => field.replace('_', "-"),
            ScreamingKebabCase => ScreamingSnakeCase.apply_to_field(field).replace('_', "-"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::RenameRule::{self, *};

    #[test]
    fn names() {
        assert_eq!(RenameRule::from_name("camelCase"), Some(CamelCase));
        assert_eq!(
            RenameRule::from_name("SCREAMING-KEBAB-CASE"),
            Some(ScreamingKebabCase)
        );
        assert_eq!(RenameRule::from_name("camelcase"), None);
    }

    #[test]
    fn fields() {
        for (field, upper, pascal, camel, kebab, screaming_kebab) in [
            (
                "turn_id", "TURN_ID", "TurnId", "turnId", "turn-id", "TURN-ID",
            ),
            ("role", "ROLE", "Role", "role", "role", "ROLE"),
            ("v", "V", "V", "v", "v", "V"),
            ("x42_y", "X42_Y", "X42Y", "x42Y", "x42-y", "X42-Y"),
            ("", "", "", "", "", ""),
        ] {
            assert_eq!(LowerCase.apply_to_field(field), field);
            assert_eq!(SnakeCase.apply_to_field(field), field);
            assert_eq!(UpperCase.apply_to_field(field), upper);
            assert_eq!(ScreamingSnakeCase.apply_to_field(field), upper);
            assert_eq!(PascalCase.apply_to_field(field), pascal);
            assert_eq!(CamelCase.apply_to_field(field), camel);
            assert_eq!(KebabCase.apply_to_field(field), kebab);
            assert_eq!(ScreamingKebabCase.apply_to_field(field), screaming_kebab);
        }
    }

    #[test]
    fn like_serde_beyond_snake_case() {
        // serde keeps a field under `lowercase`: `ID` stays `ID`, not the reserved `id`.
        assert_eq!(LowerCase.apply_to_field("ID"), "ID");
        // Only ASCII letters change case.
        assert_eq!(PascalCase.apply_to_field("é_x"), "éX");
        assert_eq!(CamelCase.apply_to_field("Éa_b"), "ÉaB");
    }
}
