//! A project's manifests: package files, containers and CI configurations at its root.

/// Manifests at the project root: (path, kind).
pub fn manifests(dir: &std::path::Path) -> Vec<(String, &'static str)> {
    let mut out = Vec::new();
    for (name, kind) in [
        ("package.json", "npm"),
        ("pyproject.toml", "python"),
        ("setup.py", "python"),
        ("requirements.txt", "python"),
        ("Cargo.toml", "cargo"),
        ("go.mod", "go"),
        ("Gemfile", "ruby"),
        ("pom.xml", "maven"),
        ("build.gradle", "gradle"),
        ("build.gradle.kts", "gradle"),
        ("Makefile", "make"),
        ("Dockerfile", "docker"),
        ("docker-compose.yml", "compose"),
        ("docker-compose.yaml", "compose"),
        ("compose.yml", "compose"),
        ("compose.yaml", "compose"),
        (".gitlab-ci.yml", "ci"),
        (".circleci/config.yml", "ci"),
        ("azure-pipelines.yml", "ci"),
        ("Jenkinsfile", "ci"),
        (".ci/run", "ci"),
    ] {
        let p = dir.join(name);
        if std::fs::symlink_metadata(&p).is_ok_and(|m| m.is_file()) {
            out.push((name.to_owned(), kind));
        }
    }
    if let Ok(rd) = std::fs::read_dir(dir.join(".github/workflows")) {
        let mut names: Vec<String> = rd
            .flatten()
            .map(|e| e.file_name().to_string_lossy().into_owned())
            .filter(|n| n.ends_with(".yml") || n.ends_with(".yaml"))
            .collect();
        names.sort();
        out.extend(names.into_iter().map(|n| (format!(".github/workflows/{n}"), "ci")));
    }
    out
}
