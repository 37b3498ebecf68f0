package annotations

// Rule names the rule a finding breaks, stable across releases and
// wordings, so that CI, editors and people can filter, count and look it
// up (docs/findings.md explains each and what to do about it): a message
// says what to fix, the rule what broke. Every finding of the directive
// parser, the generator and hotkeygen -check has one.
type Rule string

// The rules of //hotkey:cache directives, read one doc comment at a time.
const (
	// RuleDirectiveMalformed: a //hotkey: line does not read as a directive.
	RuleDirectiveMalformed Rule = "DIRECTIVE_MALFORMED"
	// RuleDirectiveMisspelt (a warning): a comment a slip away from //hotkey:cache is ignored.
	RuleDirectiveMisspelt Rule = "DIRECTIVE_MISSPELT"
	// RuleDirectiveMisplaced: //hotkey:cache is not on a package-level, non-generic struct type.
	RuleDirectiveMisplaced Rule = "DIRECTIVE_MISPLACED"
	// RuleUnknownOption: an option no directive takes.
	RuleUnknownOption Rule = "UNKNOWN_OPTION"
	// RuleDuplicateOption: an option set twice for one type.
	RuleDuplicateOption Rule = "DUPLICATE_OPTION"
	// RuleUnparsableValue: an option's value is not of the option's form.
	RuleUnparsableValue Rule = "UNPARSABLE_VALUE"
	// RuleOptionMissing: an option the directive needs is absent (key=; field= with layout=hash).
	RuleOptionMissing Rule = "OPTION_MISSING"
	// RuleConfigInvalid: options contradict each other, or the runtime's Validate refuses a value.
	RuleConfigInvalid Rule = "CONFIG_INVALID"
	// RuleKeyTemplateInvalid: key= is not a template that names each value its own Redis key.
	RuleKeyTemplateInvalid Rule = "KEY_TEMPLATE_INVALID"
)

// The rules of the structs and packages the directives annotate.
const (
	// RuleFieldMissing: key=, field= or expires= names a field the struct lacks.
	RuleFieldMissing Rule = "FIELD_MISSING"
	// RuleFieldInvalid: a field key=, field= or expires= names cannot serve it.
	RuleFieldInvalid Rule = "FIELD_INVALID"
	// RuleKeyClash: two entities of one run would share Redis keys.
	RuleKeyClash Rule = "KEY_CLASH"
	// RuleNameClash: a generated name is declared already, or generated twice.
	RuleNameClash Rule = "NAME_CLASH"
	// RuleUnencodableField: a stored field holds a type msgpack cannot encode.
	RuleUnencodableField Rule = "UNENCODABLE_FIELD"
	// RuleLockInValue: the cached struct holds a lock, which every read would copy.
	RuleLockInValue Rule = "LOCK_IN_VALUE"
	// RulePackageError: the Go package does not load or type-check where the generator reads it.
	RulePackageError Rule = "PACKAGE_ERROR"
)

// The rules of a wire shape that changes under a build still running
// (docs/changing-structs.md).
const (
	// RuleWireRecordEdited: the generated file's record of wire shapes does not read.
	RuleWireRecordEdited Rule = "WIRE_RECORD_EDITED"
	// RuleWireRecordNewer: the record was written by a newer hotkeygen.
	RuleWireRecordNewer Rule = "WIRE_RECORD_NEWER"
	// RuleWireVersionLowered: version= goes below the recorded version.
	RuleWireVersionLowered Rule = "WIRE_VERSION_LOWERED"
	// RuleWireTemplateChanged: the key template changes within one version.
	RuleWireTemplateChanged Rule = "WIRE_TEMPLATE_CHANGED"
	// RuleWireLayoutChanged: layout= changes within one version.
	RuleWireLayoutChanged Rule = "WIRE_LAYOUT_CHANGED"
	// RuleWireKeyMoved: a field's msgpack key (name or as_array place) changes within one version.
	RuleWireKeyMoved Rule = "WIRE_KEY_MOVED"
	// RuleWireKindChanged: a field's msgpack kind changes: an error if the running build misreads it, else a warning.
	RuleWireKindChanged Rule = "WIRE_KIND_CHANGED"
	// RuleWireFieldsChanged (a warning): fields added or dropped, which writes of either build erase.
	RuleWireFieldsChanged Rule = "WIRE_FIELDS_CHANGED"
	// RuleWireRenameSuspected (a warning): an added field takes a dropped one's place, as a rename would.
	RuleWireRenameSuspected Rule = "WIRE_RENAME_SUSPECTED"
)

// The rules of the generated files and of the run.
const (
	// RuleOutputNotGenerated: the output file exists and hotkeygen did not write it.
	RuleOutputNotGenerated Rule = "OUTPUT_NOT_GENERATED"
	// RuleStaleFile (-check): a generated file differs from what hotkeygen generates now.
	RuleStaleFile Rule = "STALE_FILE"
	// RuleMissingFile (-check): a package with annotations has no generated file.
	RuleMissingFile Rule = "MISSING_FILE"
	// RuleSuperfluousFile (-check): a generated file's package has no annotation left.
	RuleSuperfluousFile Rule = "SUPERFLUOUS_FILE"
	// RuleRunFailed: the run could not load, generate or write (no package matched, say).
	RuleRunFailed Rule = "RUN_FAILED"
	// RuleInternalError: a fault of hotkeygen itself, to be reported.
	RuleInternalError Rule = "INTERNAL_ERROR"
)
